"""A session that outgrows an 8,192-token window (issue 27): ``shard run``, then ``shard run
--continue`` again and again, against a stand-in for llama-server (``shard.testing.llama_server``)
that says ``n_ctx`` 8,192 on ``/v1/models`` and answers a longer request with llama.cpp's own HTTP
400. Each prompt has the model read a file of ~1,600 tokens; one in the middle reads a file three
times that size, which passes the window's ceiling within a turn.

Prints, for each compaction, the tokens before and after (as the session records them), the largest
request the server counted and whether any was refused, and saves them to
bench/results/small_window.json.

    python bench/small_window.py [--runs 12] [--window 8192]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
from pathlib import Path
from typing import Any

import orjson

from harness import save_results
from shard.testing import run_shard
from shard.testing.llama_server import LlamaServer, write_notes


async def session(root: Path, runs: int, window: int) -> dict[str, Any]:
    project = root / "project"
    names = write_notes(project, runs)
    big = runs // 2
    write_notes(project / "big", 1, lines=330)  # ~4,800 tokens: the emergency tier's
    (project / names[big]).write_text((project / "big" / "notes_01.txt").read_text())
    home = root / "home"
    home.mkdir(mode=0o700)
    server = await LlamaServer.start(n_ctx=window)
    (home / "config.toml").write_text(
        'default_model = "local/qwen"\n\n[[providers]]\nname = "local"\nkind = "openai"\n'
        f'base_url = "{server.url}"\nmodels = ["qwen"]\n'
    )
    per_run: list[dict[str, Any]] = []
    try:
        for i, name in enumerate(names):
            args = ["run", *(["--continue"] if i else []), f"read {name} and say how it begins"]
            code, out, err = await run_shard(home, project, *args, timeout=120)
            lines = err.decode().splitlines()
            closing = re.search(r"\[([\d,]+) tokens in", lines[-1] if lines else "")
            per_run.append(
                {
                    "run": i + 1,
                    "exit": code,
                    "answer": out.decode().strip(),
                    "first_line": next((x for x in lines if x.startswith("shard: local/")), ""),
                    "tokens_in": int(closing.group(1).replace(",", "")) if closing else None,
                }
            )
    finally:
        await server.close()
    entries = [
        orjson.loads(line)
        for path in (home / "sessions").glob("*/session.jsonl")
        for line in path.read_bytes().splitlines()
    ]
    compactions = [
        {"index": e["index"], "tokens_before": e["tokens_before"], "tokens_after": e["tokens_after"]}
        for e in entries
        if e["kind"] == "compaction"
    ]
    return {
        "window": window,
        "runs": per_run,
        "compactions": compactions,
        "requests": len(server.requests),
        "largest_request": max(s.tokens for s in server.requests),
        "refused": sum(s.status != 200 for s in server.requests),
    }


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--window", type=int, default=8192)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = await session(Path(tmp), args.runs, args.window)
    print(f"window {result['window']:,} tokens, {len(result['runs'])} runs of shard run (--continue)")
    print(result["runs"][0]["first_line"])
    for run in result["runs"]:
        tokens = f"{run['tokens_in'] or 0:,} tokens in"
        print(f"  run {run['run']:2}: exit {run['exit']}, {tokens}: {run['answer']}")
    print("compactions (tokens before -> after):")
    for c in result["compactions"]:
        print(f"  #{c['index']:2}: {c['tokens_before']:,} -> {c['tokens_after']:,}")
    print(
        f"largest request {result['largest_request']:,} tokens of {result['window']:,}; "
        f"{result['refused']} of {result['requests']} requests refused"
    )
    print(f"saved to {save_results('small_window', result)}")
    failed = any(r["exit"] != 0 for r in result["runs"]) or not result["compactions"]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))

"""Start-up of two Shard builds side by side (issue 31): their runs alternate, so the machine's
drift — tens of milliseconds from one minute to the next on a shared VM — falls on both alike.
A bench that measures one build and then the other cannot tell a 20 ms change from that drift.

For each build (a ``shard`` console script: ``--a`` and ``--b``; ``--a`` defaults to this
checkout's), against one local OpenAI-compatible server answering "Hello.":

* ``shard run``: spawn → the first provider request reaching the server, and the whole run's wall;
* a fresh ``shard daemon`` (a new SHARD_HOME each run): spawn → listening, → ``agent.create``
  answered, → the first prompt's ``turn_end``, over the unix socket.

Prints the medians and saves them to bench/results/start_ab.json.

    python bench/start_ab.py --b /path/to/other/checkout/.venv/bin/shard [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from first_request import Server, serve_openai
from harness import save_results, shard_argv


async def one_shot(exe: list[str], server: Server, home: Path, cwd: Path) -> dict[str, float]:
    server.first_request_at = None
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *exe, "run", "--model", "local/m", "say hello",
        cwd=cwd, env={**os.environ, "SHARD_HOME": str(home)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or server.first_request_at is None or out.decode().strip() != "Hello.":
        raise RuntimeError(f"shard run failed ({proc.returncode}): {err.decode()[-500:]}")
    return {"first_request_ms": (server.first_request_at - t0) * 1000, "wall_ms": wall * 1000}


async def fresh_daemon(exe: list[str], config: str, cwd: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(config)
        t0 = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *exe, "daemon", "--port", "0", "--home", str(home),
            cwd=cwd, env={**os.environ, "SHARD_HOME": str(home)}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.stdout is not None
        try:
            while b"daemon.sock" not in await proc.stdout.readline():
                if proc.returncode is not None:
                    raise RuntimeError("the daemon exited before it listened")
            figures = {"listening_ms": (time.perf_counter() - t0) * 1000}
            reader, writer = await asyncio.open_unix_connection(str(home / "daemon.sock"))

            async def until(kind: str, msg_id: str | None = None) -> dict[str, Any]:
                while True:
                    message = json.loads(await reader.readline())
                    if message.get("type") == kind and (msg_id is None or message.get("id") == msg_id):
                        return message

            def send(message: dict[str, Any]) -> None:
                writer.write(json.dumps(message).encode() + b"\n")

            await until("hello")
            send({"type": "agent.create", "id": "c", "cwd": str(cwd), "model": "local/m"})
            agent = (await until("response", "c"))["data"]["agent_id"]
            figures["created_ms"] = (time.perf_counter() - t0) * 1000
            send({"type": "agent.attach", "id": "a", "agent_id": agent})
            await until("sync")
            send({"type": "prompt", "id": "p", "agent_id": agent, "message": "say hello"})
            await until("turn_end")
            figures["first_answer_ms"] = (time.perf_counter() - t0) * 1000
            writer.close()
            return figures
        finally:
            if proc.returncode is None:
                proc.terminate()
                await proc.wait()


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", help="a shard console script (default: this checkout's)")
    parser.add_argument("--b", required=True, help="the other build's shard console script")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    builds = {"a": [args.a] if args.a else shard_argv(), "b": [args.b]}
    server, runner, port = await serve_openai()
    config = (
        'default_model = "local/m"\n\n[[providers]]\nname = "local"\nkind = "openai"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nmodels = [{{ id = "m", context_window = 32768 }}]\n'
    )
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in builds}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
            home.mkdir(mode=0o700)
            cwd.mkdir()
            (home / "config.toml").write_text(config)
            for exe in builds.values():  # warm the page cache; not counted
                await one_shot(exe, server, home, cwd)
            for _ in range(args.runs):
                for name, exe in builds.items():
                    figures = await one_shot(exe, server, home, cwd)
                    figures.update(await fresh_daemon(exe, config, cwd))
                    samples[name].append(figures)
    finally:
        await runner.cleanup()
    results = {
        name: {key: round(statistics.median(s[key] for s in runs), 1) for key in runs[0]}
        for name, runs in samples.items()
    }
    print(f"two builds, runs alternating, medians of {args.runs} (ms)")
    for key in results["a"]:
        a, b = results["a"][key], results["b"][key]
        print(f"  {key:18s} a {a:7.1f}   b {b:7.1f}   b/a {b / a:5.2f}")
    out = save_results("start_ab", {"runs": args.runs, "a": " ".join(builds["a"]), "b": args.b, **results})
    print(f"  saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))

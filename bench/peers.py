"""Shard beside other agent CLIs: the same two-turn tool task (turn 1 reads a file through a tool,
turn 2 answers) against one local OpenAI-compatible server (``bench/tool_server.py``), in one run.

Shard's modes:

- ``oneshot``          ``shard run PROMPT`` (no daemon): spawn → exit
- ``daemon_oneshot``   ``shard run PROMPT`` while a daemon runs on the same SHARD_HOME
- ``stdio_first``      ``shard agent --stdio``: spawn → the first prompt's turn_end
- ``stdio_extra``      each further prompt on that process: prompt → turn_end
- ``daemon_first``     over the daemon's unix socket: agent.create + agent.attach + prompt → turn_end
- ``daemon_extra``     each further prompt to that agent: prompt → turn_end

Baselines in the same run: ``python -c pass`` and ``python -c "import openai"``, both with Shard's
own interpreter. Each mode's median, min/max and IQR are printed with its ratio to both baselines and
saved to bench/results/peers.json.

``--peer CMD`` (repeatable) times another command beside them. CMD is split like a shell line
(``shlex``) after these placeholders are filled: ``{prompt}`` (the task, one argument),
``{base_url}`` (``http://127.0.0.1:PORT/v1``), ``{model}`` (``m``), ``{api_key}`` (a dummy key). The
same values are in its environment as ``PEER_PROMPT``, ``PEER_BASE_URL``, ``PEER_MODEL``, and as
``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` for CLIs that read those. It runs in the task's
directory (holding ``notes.txt``); a non-zero exit fails the bench, and the number of requests it
made to the server is shown beside its figure (2 for the task done as Shard does it). For example:

    python bench/peers.py --runs 10 \\
        --peer 'mycli --base-url {base_url} --model {model} -p {prompt}'
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import save_results, shard_argv
from shard.testing import DaemonProcess
from shard.testing.daemon import UnixClient
from tool_server import ANSWER, ToolServer, start

PROMPT = "Read notes.txt and tell me what it says."
API_KEY = "bench-not-a-key"


def config_toml(port: int) -> str:
    return (
        'default_model = "local/m"\n\n[[providers]]\nname = "local"\nkind = "openai"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nmodels = [{{ id = "m" }}]\n'
    )


def summary(values: list[float]) -> dict[str, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {
        "median": round(statistics.median(values), 1),
        "min": round(min(values), 1),
        "max": round(max(values), 1),
        "q1": round(q[0], 1),
        "q3": round(q[2], 1),
    }


async def timed_exec(argv: list[str], cwd: Path, env: dict[str, str], expect: str | None = None) -> float:
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    elapsed = (time.perf_counter() - t0) * 1000
    if proc.returncode != 0 or (expect is not None and expect not in out.decode(errors="replace")):
        said = f"{out.decode()[-300:]} {err.decode()[-500:]}"
        raise RuntimeError(f"{argv[:3]} failed ({proc.returncode}): {said}")
    return elapsed


async def stdio_session(cwd: Path, env: dict[str, str], extra: int) -> tuple[float, list[float]]:
    """Spawn → the first turn_end, then each extra prompt → its turn_end (ms)."""
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *shard_argv(), "agent", "--stdio", cwd=cwd, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def turn() -> float:
        start = time.perf_counter()
        stdin.write(b'{"type":"prompt","message":' + f'"{PROMPT}"'.encode() + b"}\n")
        while line := await asyncio.wait_for(stdout.readline(), 60):
            if line.startswith(b'{"type":"turn_end"'):
                return (time.perf_counter() - start) * 1000
            if line.startswith(b'{"type":"error"'):
                raise RuntimeError(line.decode())
        raise RuntimeError("shard agent --stdio ended before turn_end")

    await turn()
    first = (time.perf_counter() - t0) * 1000
    extras = [await turn() for _ in range(extra)]
    stdin.close()
    await proc.wait()
    return first, extras


async def daemon_session(daemon: DaemonProcess, cwd: Path, extra: int) -> tuple[float, list[float]]:
    """agent.create + attach + prompt → turn_end, then each extra prompt → its turn_end (ms)."""
    client = await UnixClient.connect(daemon.socket)
    try:
        t0 = time.perf_counter()
        await client.send({"type": "agent.create", "id": "c", "cwd": str(cwd)})
        created = (await client.until(lambda m: m.get("id") == "c"))[-1]
        assert created.get("success"), created
        agent = created["data"]["agent_id"]
        await client.send({"type": "agent.attach", "id": "a", "agent_id": agent})
        await client.until(lambda m: m.get("type") == "sync")

        async def turn() -> float:
            start = time.perf_counter()
            await client.send({"type": "prompt", "agent_id": agent, "message": PROMPT})
            for m in await client.until(lambda m: m.get("type") in ("turn_end", "error"), timeout=60):
                if m.get("type") == "error":
                    raise RuntimeError(str(m))
            return (time.perf_counter() - start) * 1000

        await turn()
        first = (time.perf_counter() - t0) * 1000
        extras = [await turn() for _ in range(extra)]
        await client.send({"type": "agent.terminate", "id": "t", "agent_id": agent})
        await client.until(lambda m: m.get("id") == "t")
        return first, extras
    finally:
        await client.close()


def peer_argv(template: str, base_url: str) -> list[str]:
    values = {"prompt": shlex.quote(PROMPT), "base_url": base_url, "model": "m", "api_key": API_KEY}
    return shlex.split(template.format(**values))


def peer_env(base: dict[str, str], base_url: str) -> dict[str, str]:
    return {
        **base,
        "PEER_PROMPT": PROMPT,
        "PEER_BASE_URL": base_url,
        "PEER_MODEL": "m",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_MODEL": "m",
    }


async def measure(args: argparse.Namespace, root: Path, server: ToolServer, port: int) -> dict[str, Any]:
    cwd = root / "task"
    cwd.mkdir()
    (cwd / "notes.txt").write_text("bench\n")
    homes = {name: root / name for name in ("direct", "daemon")}
    for home in homes.values():
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(config_toml(port))
        (home / "config.toml").chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHARD_")}
    direct_env = {**env, "SHARD_HOME": str(homes["direct"])}
    daemon_env = {**env, "SHARD_HOME": str(homes["daemon"])}
    base_url = f"http://127.0.0.1:{port}/v1"
    py = sys.executable
    samples: dict[str, list[float]] = {}
    peer_calls: dict[str, list[int]] = {}

    def add(name: str, *values: float) -> None:
        samples.setdefault(name, []).extend(values)

    daemon = await DaemonProcess.start(homes["daemon"])
    try:
        for i in range(args.runs + 1):  # run 0 warms the page cache and is not counted
            row: dict[str, list[float]] = {}
            row["python_pass"] = [await timed_exec([py, "-c", "pass"], cwd, env)]
            row["python_import_openai"] = [await timed_exec([py, "-c", "import openai"], cwd, env)]
            run = [*shard_argv(), "run", PROMPT]
            row["oneshot"] = [await timed_exec(run, cwd, direct_env, ANSWER)]
            row["daemon_oneshot"] = [await timed_exec(run, cwd, daemon_env, ANSWER)]
            first, extras = await stdio_session(cwd, direct_env, args.extra)
            row["stdio_first"], row["stdio_extra"] = [first], extras
            first, extras = await daemon_session(daemon, cwd, args.extra)
            row["daemon_first"], row["daemon_extra"] = [first], extras
            for n, template in enumerate(args.peer):
                argv = peer_argv(template, base_url)
                before = server.requests
                row[f"peer{n + 1}"] = [await timed_exec(argv, cwd, peer_env(env, base_url))]
                # a peer that never called the server did not do the task: say so beside its figure
                peer_calls.setdefault(f"peer{n + 1}", []).append(server.requests - before)
            if i:
                for name, values in row.items():
                    add(name, *values)
    finally:
        await daemon.stop()
    stats = {name: summary(values) for name, values in samples.items()}
    pass_ms = stats["python_pass"]["median"]
    openai_ms = stats["python_import_openai"]["median"]
    for s in stats.values():
        s["x_python_pass"] = round(s["median"] / pass_ms, 2)
        s["x_import_openai"] = round(s["median"] / openai_ms, 2)
    for name, calls in peer_calls.items():
        stats[name]["model_calls_min"] = min(calls)
    return stats


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--extra", type=int, default=5, help="extra prompts per persistent session")
    parser.add_argument("--peer", action="append", default=[], metavar="CMD", help="another agent CLI")
    parser.add_argument("--name", default="peers", help="results file name (bench/results/NAME.json)")
    args = parser.parse_args()
    server = ToolServer("notes.txt")
    runner, port = await start(server)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            stats = await measure(args, Path(tmp), server, port)
    finally:
        await runner.cleanup()
    print(f"two-turn tool task, {args.runs} runs ({args.extra} extra prompts per persistent session); ms")
    print(f"  {'':22s} {'median':>8s} {'min':>8s} {'max':>8s} {'IQR':>15s} {'x pass':>7s} {'x openai':>8s}")
    for name, s in stats.items():
        label = args.peer[int(name[4:]) - 1][:22] if name.startswith("peer") else name
        iqr = f"{s['q1']}-{s['q3']}"
        calls = f"  ({s['model_calls_min']:.0f}+ model calls a run)" if "model_calls_min" in s else ""
        print(
            f"  {label:22s} {s['median']:8.1f} {s['min']:8.1f} {s['max']:8.1f} {iqr:>15s}"
            f" {s['x_python_pass']:7.2f} {s['x_import_openai']:8.2f}{calls}"
        )
    peers = {f"peer{n + 1}": cmd for n, cmd in enumerate(args.peer)}
    out = save_results(args.name, {"runs": args.runs, "extra": args.extra, "peers": peers, "results": stats})
    print(f"  saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))

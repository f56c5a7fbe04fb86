"""Warm starts (issue 16): from ``agent.create`` to the first prompt's first provider request reaching
a local OpenAI-compatible server, for a daemon that forks runtimes from its warm template and for
one started ``--cold-start`` (each runtime a fresh interpreter), measured in the same run:

* fresh: agent.create + agent.attach + prompt → the server sees the request;
* restored: the agent's runtime stopped (agent.terminate), then attach (which restores it from its
  session) + prompt → the server sees the request;
* fan-out: 20 agents created at once, each prompted on its sync → the 20th request at the server
  (what a parent's 20 subagents cost to get going).

Baselines in the same run: ``python -c pass`` (a bare interpreter start). Target (issue 16): fresh and
restored ≤ 60 ms, unloaded.

    python bench/warm_start.py [--runs 15] [--fanout 20]

Prints medians (and min/max) and saves them to bench/results/warm_start.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from first_request import Server, serve_openai
from harness import save_results
from shard.testing import DaemonProcess
from shard.testing.daemon import UnixClient


async def _first_request(server: Server, t0: float) -> float:
    while server.first_request_at is None:  # noqa: ASYNC110 - the server's handler sets a plain field
        await asyncio.sleep(0.0005)
    return (server.first_request_at - t0) * 1000


async def _idle(client: UnixClient, agent: str) -> None:
    await client.until(
        lambda m: m.get("type") == "status" and m.get("status") == "idle" and m.get("agent_id") == agent
    )


async def fresh(client: UnixClient, server: Server, cwd: Path, n: int) -> tuple[float, str]:
    server.first_request_at = None
    t0 = time.perf_counter()
    created, _ = await client.request({"type": "agent.create", "id": f"c{n}", "cwd": str(cwd)})
    agent = created["data"]["agent_id"]
    await client.request({"type": "agent.attach", "id": f"a{n}", "agent_id": agent})
    await client.send({"type": "prompt", "agent_id": agent, "message": "say hello"})
    ms = await _first_request(server, t0)
    await _idle(client, agent)
    return ms, agent


async def restored(client: UnixClient, server: Server, agent: str, n: int) -> float:
    await client.request({"type": "agent.terminate", "id": f"t{n}", "agent_id": agent})
    await client.request({"type": "agent.detach", "id": f"d{n}", "agent_id": agent})
    server.first_request_at = None
    t0 = time.perf_counter()
    await client.request({"type": "agent.attach", "id": f"r{n}", "agent_id": agent})
    await client.send({"type": "prompt", "agent_id": agent, "message": "again"})
    ms = await _first_request(server, t0)
    await _idle(client, agent)
    return ms


async def fanout(client: UnixClient, server: Server, cwd: Path, count: int) -> float:
    """``count`` agents created at once; each prompted as soon as it is attached."""
    server.requests = 0
    t0 = time.perf_counter()

    for i in range(count):
        await client.send({"type": "agent.create", "id": f"f{i}", "cwd": str(cwd)})
    agents: list[str] = []
    while len(agents) < count:
        message = await client.next()
        if message.get("type") == "response" and str(message.get("id", "")).startswith("f"):
            agent = message["data"]["agent_id"]
            agents.append(agent)
            await client.send({"type": "agent.attach", "id": f"fa{agent}", "agent_id": agent})
            await client.send({"type": "prompt", "agent_id": agent, "message": "go"})
    while server.requests < count:  # noqa: ASYNC110 - the server's handler counts in a plain field
        await asyncio.sleep(0.001)
    ms = (time.perf_counter() - t0) * 1000
    for agent in agents:
        await client.request({"type": "agent.terminate", "id": f"ft{agent}", "agent_id": agent})
    return ms


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values), 1),
        "min_ms": round(min(values), 1),
        "max_ms": round(max(values), 1),
    }


def bare_python(runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def measure(
    port: int, server: Server, tmp: Path, flags: list[str], runs: int, count: int
) -> dict[str, Any]:
    home, cwd = tmp / f"home{len(flags)}", tmp / "cwd"
    home.mkdir()
    cwd.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'default_model = "local/m"\n[[providers]]\nname = "local"\nkind = "openai"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nmodels = [{{ id = "m" }}]\n'
    )
    (home / "config.toml").chmod(0o600)
    daemon = await DaemonProcess.start(home, "--max-runtimes", str(count + 5), *flags)
    try:
        client = await daemon.unix()
        await fresh(client, server, cwd, -1)  # the template is built and the page cache warm
        new, back = [], []
        for n in range(runs):
            ms, agent = await fresh(client, server, cwd, n)
            new.append(ms)
            back.append(await restored(client, server, agent, n))
            await client.request({"type": "agent.terminate", "id": f"e{n}", "agent_id": agent})
        spread = await fanout(client, server, cwd, count)
    finally:
        await daemon.kill()
    return {"fresh": _stats(new), "restored": _stats(back), f"fanout_{count}_ms": round(spread, 1)}


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--fanout", type=int, default=20)
    args = parser.parse_args()
    server, runner, port = await serve_openai()
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for label, flags in (("warm", []), ("cold", ["--cold-start"])):
                results[label] = await measure(port, server, Path(tmp), flags, args.runs, args.fanout)
    finally:
        await runner.cleanup()
    bare = bare_python(args.runs)
    results["python_c_pass_ms"] = round(bare, 1)
    print(f"agent.create -> first provider request, median of {args.runs} (min-max)")
    print(f"  python -c pass {bare:.1f} ms")
    for label in ("warm", "cold"):
        r = results[label]
        for kind in ("fresh", "restored"):
            s = r[kind]
            ratio = s["median_ms"] / bare
            spread = f"({s['min_ms']}-{s['max_ms']})"
            print(f"  {label} {kind:8s} {s['median_ms']:7.1f} ms {spread} = {ratio:4.1f}x bare")
        fan = r[f"fanout_{args.fanout}_ms"]
        print(f"  {label} {args.fanout} at once -> the last first request: {fan:.1f} ms")
    ratio = results["warm"]["fresh"]["median_ms"] / results["cold"]["fresh"]["median_ms"]
    print(f"  warm/cold fresh: {ratio:.2f}")
    out = save_results("warm_start", {"runs": args.runs, **results})
    print(f"  saved {out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(asyncio.run(main()))

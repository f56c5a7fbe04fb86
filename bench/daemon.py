"""The daemon under load: message_delta throughput to 1 and 10 WebSocket clients vs the same agent
read directly over stdio, attach→sync latency on a live runtime, and the daemon's own RSS with 50
idle agents (runtimes reaped) and with 10 live runtimes.

Targets (issue 6): through-daemon throughput >= 50% of direct for 1 client and >= 25% per client
for 10; attach→sync <= 20 ms; daemon RSS <= 80 MB with 50 idle agents. The clients count frames
without decoding them, so the figures are the daemon's and the runtime's, not the bench's.

    python bench/daemon.py [--runs 5] [--deltas 10000]

Prints medians and saves them to bench/results/daemon.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from harness import rss_mb, save_results
from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.agent_process import shard_command
from shard.testing.web import ws_protocols

TARGET_ONE = 0.50
TARGET_TEN = 0.25
TARGET_ATTACH_MS = 20.0
TARGET_IDLE_RSS_MB = 80.0
CHUNK = 16


def write_home(home: Path, deltas: int) -> None:
    text = "".join(f"{i:0{CHUNK - 1}d}|" for i in range(deltas))
    write_scripted_home(
        home, [{"blocks": [{"type": "text", "text": text}], "chunk": CHUNK}], loop=True, record=False
    )


# --- direct over stdio ------------------------------------------------------------------------------


async def direct_rate(home: Path, cwd: Path) -> float:
    proc = await asyncio.create_subprocess_exec(
        *shard_command("agent", "--stdio"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home)},
        limit=1 << 27,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    for _ in range(2):  # hello, sync
        await proc.stdout.readline()
    proc.stdin.write(b'{"type":"prompt","message":"go"}\n')
    count, first = 0, 0.0
    while line := await proc.stdout.readline():
        if line.startswith(b'{"type":"message_delta"'):
            if not count:
                first = time.perf_counter()
            count += 1
        elif line.startswith(b'{"type":"turn_end"'):
            break
    elapsed = time.perf_counter() - first
    proc.stdin.close()
    await proc.wait()
    return count / elapsed


# --- through the daemon -----------------------------------------------------------------------------


class RawWs:
    """A WebSocket client that counts frames by prefix instead of decoding them."""

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.session = session
        self.ws = ws

    @classmethod
    async def connect(cls, daemon: DaemonProcess) -> RawWs:
        """Authenticated as a browser would be: a ticket of the daemon's enrolled test browser."""
        port = daemon.port
        protocols = ws_protocols(await daemon.ticket())
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(
            f"http://127.0.0.1:{port}/ws",
            headers={"Origin": f"http://127.0.0.1:{port}"},
            max_msg_size=1 << 27,
            protocols=protocols,
        )
        client = cls(session, ws)
        await client.until(lambda m: m.startswith('{"type":"hello"'))
        return client

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_str(orjson.dumps(message).decode())

    async def until(self, predicate: Any) -> str:
        while True:
            msg = await self.ws.receive()
            if msg.type != aiohttp.WSMsgType.TEXT:
                raise EOFError(f"closed: {msg.type}")
            if predicate(msg.data):
                return msg.data

    async def attach(self, agent_id: str) -> float:
        """Attach; seconds from sending agent.attach to receiving its sync."""
        start = time.perf_counter()
        await self.send({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        await self.until(lambda m: '"type":"sync"' in m[:80])
        return time.perf_counter() - start

    async def count_deltas(self) -> float:
        count, first = 0, 0.0
        while True:
            msg = await self.ws.receive()
            data = msg.data
            if msg.type != aiohttp.WSMsgType.TEXT:
                raise EOFError(f"closed: {msg.type}")
            if '"type":"message_delta"' in data[:64]:
                if not count:
                    first = time.perf_counter()
                count += 1
            elif '"type":"turn_end"' in data[:64]:
                return count / (time.perf_counter() - first)

    async def close(self) -> None:
        await self.ws.close()
        await self.session.close()


async def create(client: RawWs, cwd: Path) -> str:
    await client.send({"type": "agent.create", "id": "c", "cwd": str(cwd)})
    reply = await client.until(lambda m: '"type":"response"' in m[:40] and '"command":"agent.create"' in m)
    data = orjson.loads(reply)
    assert data["success"], data
    return data["data"]["agent_id"]


async def daemon_rates(daemon: DaemonProcess, cwd: Path, clients: int) -> list[float]:
    """Per-client message_delta rates for one turn of a fresh agent watched by ``clients`` clients."""
    admin = await RawWs.connect(daemon)
    agent = await create(admin, cwd)
    watchers = [await RawWs.connect(daemon) for _ in range(clients)]
    for w in watchers:
        await w.attach(agent)
    counting = [asyncio.ensure_future(w.count_deltas()) for w in watchers]
    await watchers[0].send({"type": "prompt", "agent_id": agent, "message": "go"})
    rates = await asyncio.gather(*counting)
    await admin.send({"type": "agent.terminate", "id": "t", "agent_id": agent})
    for c in (admin, *watchers):
        await c.close()
    return list(rates)


async def attach_latency(daemon: DaemonProcess, cwd: Path, samples: int) -> list[float]:
    admin = await RawWs.connect(daemon)
    agent = await create(admin, cwd)  # its runtime is live from here
    client = await RawWs.connect(daemon)
    out = []
    for _ in range(samples):
        out.append(await client.attach(agent))
        await client.send({"type": "agent.detach", "id": "d", "agent_id": agent})
        await client.until(lambda m: '"command":"agent.detach"' in m)
    await client.close()
    await admin.close()
    return out


async def rss_figures(root: Path, cwd: Path, idle_agents: int, live: int) -> dict[str, float]:
    home = root / "rss-home"
    write_home(home, 10)
    daemon = await DaemonProcess.start(home, "--idle-runtime-timeout", "1")
    try:
        base = rss_mb(daemon.proc.pid)
        admin = await RawWs.connect(daemon)
        agents = [await create(admin, cwd) for _ in range(idle_agents)]
        await admin.send({"type": "agent.list", "id": "l"})
        while True:  # every runtime reaped
            await asyncio.sleep(0.5)
            await admin.send({"type": "agent.list", "id": "l"})
            listing = orjson.loads(await admin.until(lambda m: '"command":"agent.list"' in m))
            if all(a["runtime_state"] == "stopped" for a in listing["data"]["agents"]):
                break
        idle_rss = rss_mb(daemon.proc.pid)
        await admin.close()
    finally:
        await daemon.kill()
    daemon = await DaemonProcess.start(home, "--idle-runtime-timeout", "600")
    try:
        watcher = await RawWs.connect(daemon)
        for agent in agents[:live]:
            await watcher.attach(agent)
        live_rss = rss_mb(daemon.proc.pid)
        await watcher.close()
    finally:
        await daemon.kill()
    return {
        "daemon_rss_start_mb": base,
        "daemon_rss_idle_agents_mb": idle_rss,
        "daemon_rss_live_mb": live_rss,
    }


async def main_async(runs: int, deltas: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cwd = root / "project"
        cwd.mkdir()
        home = root / "home"
        write_home(home, deltas)
        direct = [await direct_rate(home, cwd) for _ in range(runs)]
        daemon = await DaemonProcess.start(home)
        try:
            one = [(await daemon_rates(daemon, cwd, 1))[0] for _ in range(runs)]
            ten_runs = [await daemon_rates(daemon, cwd, 10) for _ in range(runs)]
            latency = await attach_latency(daemon, cwd, 50)
        finally:
            await daemon.kill()
        rss = await rss_figures(root, cwd, 50, 10)
    ten_per_client = [statistics.median(r) for r in ten_runs]
    ten_slowest = [min(r) for r in ten_runs]
    d, o, t, s = (statistics.median(x) for x in (direct, one, ten_per_client, ten_slowest))
    return {
        "deltas_per_turn": deltas,
        "runs": runs,
        "direct_stdio_deltas_per_s": round(d),
        "daemon_1_ws_client_deltas_per_s": round(o),
        "daemon_10_ws_clients_median_per_client_deltas_per_s": round(t),
        "daemon_10_ws_clients_slowest_client_deltas_per_s": round(s),
        "ratio_1_client": round(o / d, 3),
        "ratio_10_clients_per_client": round(t / d, 3),
        "ratio_10_clients_slowest": round(s / d, 3),
        "attach_to_sync_ms_median": round(statistics.median(latency) * 1000, 2),
        "attach_to_sync_ms_p90": round(sorted(latency)[int(len(latency) * 0.9)] * 1000, 2),
        **{k: round(v, 1) for k, v in rss.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=10_000)
    args = parser.parse_args()
    result = asyncio.run(main_async(args.runs, args.deltas))
    verdicts = {
        "ratio_1_client": result["ratio_1_client"] >= TARGET_ONE,
        "ratio_10_clients_per_client": result["ratio_10_clients_per_client"] >= TARGET_TEN,
        "attach_to_sync_ms_median": result["attach_to_sync_ms_median"] <= TARGET_ATTACH_MS,
        "daemon_rss_idle_agents_mb": result["daemon_rss_idle_agents_mb"] <= TARGET_IDLE_RSS_MB,
    }
    for key, value in result.items():
        mark = "" if key not in verdicts else ("  (target met)" if verdicts[key] else "  (TARGET MISSED)")
        print(f"{key:55} {value}{mark}")
    out = save_results("daemon", result)
    print(f"saved {out}")


if __name__ == "__main__":
    main()

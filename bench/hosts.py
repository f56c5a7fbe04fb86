"""Agents on another host over SSH (issue 30), against a real OpenSSH server on 127.0.0.1 that plays
the host (``shard.testing.sshd``), with the offline scripted model, measured in one run:

* **first connection**: a fresh daemon's first remote agent, ``agent.create`` → the first prompt's
  answer, the host's connection not yet open (the ssh handshake is in it);
* **remote, connection open**: a further remote agent, create → first answer, over the open
  connection; beside **local cold** (a daemon started ``--cold-start``: each runtime a fresh
  interpreter) and **local warm** (forked from the warm template), create → first answer;
* **extra prompt**: one more prompt → its answer, on a remote agent and on a local one;
* **20 on one host**: 20 remote runtimes live at once: how many ssh connections the host sees, the
  daemon's PSS, and the PSS of the local ``ssh`` processes (the master and one client per runtime).

Targets (issue 30): remote (connection open) ≤ 1.5x local cold; extra prompt remote ≤ 2x local.

    python bench/hosts.py [--runs 7] [--fanout 20]

Prints medians (and min/max) and saves them to bench/results/hosts.json.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import save_results
from procfs import descendants, pss_mb
from shard.testing import DaemonProcess, text_step, write_scripted_home
from shard.testing.daemon import UnixClient
from shard.testing.sshd import Sshd


def _home(root: Path, remote: Path, sshd: Sshd, name: str) -> Path:
    entry = (
        f'\n[[hosts]]\nname = "box"\nssh = "{sshd.alias}"\nssh_config = "{sshd.ssh_config}"\n'
        f'shard = "{sys.executable} -m shard"\nhome = "{remote / "home"}"\nsessions = 64\n'
    )
    home = write_scripted_home(root / name, [text_step("ok")], loop=True, record=False, extra_toml=entry)
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace('script = "script.json"', f'script = "{home / "script.json"}"')
    )
    return home


async def _answered(client: UnixClient, agent: str) -> None:
    await client.until(
        lambda m: m.get("type") == "status" and m.get("status") == "idle" and m.get("agent_id") == agent
    )


async def _create_and_answer(client: UnixClient, cwd: Path, host: str | None, n: int) -> float:
    """agent.create → attach → prompt → idle, in ms."""
    t0 = time.perf_counter()
    fields: dict[str, Any] = {"type": "agent.create", "id": f"c{n}", "cwd": str(cwd)}
    if host:
        fields["host"] = host
    resp, _ = await client.request(fields)
    assert resp["success"], resp
    agent = resp["data"]["agent_id"]
    await client.request({"type": "agent.attach", "id": f"a{n}", "agent_id": agent})
    await client.send({"type": "prompt", "agent_id": agent, "message": "hi"})
    await _answered(client, agent)
    return (time.perf_counter() - t0) * 1000


async def _extra_prompts(client: UnixClient, agent: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await client.send({"type": "prompt", "agent_id": agent, "message": "again"})
        await _answered(client, agent)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values), 1),
        "min_ms": round(min(values), 1),
        "max_ms": round(max(values), 1),
    }


async def _agent_of(client: UnixClient, cwd: Path, host: str | None) -> str:
    fields: dict[str, Any] = {"type": "agent.create", "id": "x", "cwd": str(cwd)}
    if host:
        fields["host"] = host
    resp, _ = await client.request(fields)
    agent = resp["data"]["agent_id"]
    await client.request({"type": "agent.attach", "id": "ax", "agent_id": agent})
    await client.send({"type": "prompt", "agent_id": agent, "message": "warm up"})
    await _answered(client, agent)
    return agent


async def run(runs: int, fanout: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shard-hosts-") as tmp:
        root = Path(tmp)
        sshd = Sshd(root / "sshd", max_sessions=fanout + 8).start()
        remote = root / "remote"
        project = remote / "project"
        project.mkdir(parents=True)
        try:
            first: list[float] = []
            remote_open: list[float] = []
            local_warm: list[float] = []
            extra_remote: list[float] = []
            extra_local: list[float] = []
            # fresh daemons: the first remote agent pays the handshake
            for i in range(max(3, runs // 2)):
                daemon = await DaemonProcess.start(_home(root, remote, sshd, f"first{i}"))
                try:
                    client = await daemon.unix()
                    first.append(await _create_and_answer(client, project, "box", 0))
                finally:
                    await daemon.stop()
            daemon = await DaemonProcess.start(_home(root, remote, sshd, "warm"))
            try:
                client = await daemon.unix()
                await _create_and_answer(client, project, "box", 0)  # opens the connection
                await _create_and_answer(client, project, None, 1)  # the template is warm
                for n in range(runs):
                    remote_open.append(await _create_and_answer(client, project, "box", 10 + n))
                    local_warm.append(await _create_and_answer(client, project, None, 100 + n))
                far = await _agent_of(client, project, "box")
                near = await _agent_of(client, project, None)
                extra_remote = await _extra_prompts(client, far, runs)
                extra_local = await _extra_prompts(client, near, runs)
            finally:
                await daemon.stop()
            local_cold: list[float] = []
            daemon = await DaemonProcess.start(_home(root, remote, sshd, "cold"), "--cold-start")
            try:
                client = await daemon.unix()
                for n in range(runs):
                    local_cold.append(await _create_and_answer(client, project, None, n))
            finally:
                await daemon.stop()
            fan = await _fan_out(root, remote, sshd, project, fanout)
        finally:
            sshd.stop()
    cold, opened = statistics.median(local_cold), statistics.median(remote_open)
    return {
        "runs": runs,
        "first_connection_create_to_answer": _summary(first),
        "remote_connection_open_create_to_answer": _summary(remote_open),
        "local_cold_create_to_answer": _summary(local_cold),
        "local_warm_create_to_answer": _summary(local_warm),
        "remote_over_local_cold": round(opened / cold, 2),
        "remote_over_local_warm": round(opened / statistics.median(local_warm), 2),
        "extra_prompt_remote": _summary(extra_remote),
        "extra_prompt_local": _summary(extra_local),
        "extra_prompt_remote_over_local": round(
            statistics.median(extra_remote) / statistics.median(extra_local), 2
        ),
        "fan_out": fan,
    }


async def _fan_out(root: Path, remote: Path, sshd: Sshd, project: Path, count: int) -> dict[str, Any]:
    daemon = await DaemonProcess.start(_home(root, remote, sshd, "fan"), "--max-runtimes", str(count + 4))
    try:
        client = await daemon.unix()
        before = len(sshd.session_pids())
        t0 = time.perf_counter()
        created = await asyncio.gather(*(UnixClient.connect(daemon.socket) for _ in range(count)))
        responses = await asyncio.gather(
            *(
                c.request({"type": "agent.create", "id": f"f{i}", "cwd": str(project), "host": "box"})
                for i, c in enumerate(created)
            )
        )
        took = (time.perf_counter() - t0) * 1000
        assert all(r["success"] for r, _ in responses), [r for r, _ in responses if not r["success"]]
        connections = len(sshd.session_pids()) - before
        pid = daemon.proc.pid
        ssh = [p for p in descendants(pid) if _comm(p) == "ssh"]
        result = {
            "runtimes": count,
            "create_all_ms": round(took),
            "ssh_connections_to_the_host": connections,
            "daemon_pss_mb": round(pss_mb(pid), 1),
            "local_ssh_processes": len(ssh),
            "local_ssh_pss_mb": round(sum(pss_mb(p) for p in ssh), 1),
        }
        for c in created:
            await c.close()
        del client
        return result
    finally:
        await daemon.stop()


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--fanout", type=int, default=20)
    args = parser.parse_args()
    result = asyncio.run(run(args.runs, args.fanout))
    path = save_results("hosts", result)
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"saved {path}")


if __name__ == "__main__":
    main()

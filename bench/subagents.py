"""Background subagents (issue 14): how soon a child launched by ``subagent.create`` asks its model,
and what 20 live children cost in memory.

* **create → first request**: from the ``subagent.create`` being sent on the daemon's unix socket to
  the child's first provider request, seen as the line the scripted provider appends to its
  ``record`` file (polled every millisecond, so the figure is at most ~1 ms late). Each run is a new
  child (a new ``shard agent --stdio`` runtime); median of N.
* **fan-out**: one ``subagent.create`` of 20 parallel tasks → the 20th child's first provider
  request (the parent's ``[subagents] max_tasks`` raised to 20).
* Both for a daemon that forks its runtimes from the warm template (issue 16) and for one started
  ``--cold-start``, in the same run.
* **RSS with 20 live children**: 20 children in parallel (three parents: the launch policy allows 8
  live runs per parent) each sleeping in a tool, so all 20 runtimes are live; then the daemon's RSS
  with its children's runtimes (told apart from the parents' own by their ``--session``), and of
  the daemon with every process under it, read from /proc.

    python bench/subagents.py [--runs 10] [--children 20]

RSS counts the pages a forked child shares with its template in full in every child; PSS (each
shared page divided among its sharers) is the honest sum, and is printed beside it.

Prints the figures and saves them to bench/results/subagents.json.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from harness import rss_mb, save_results
from shard.testing import DaemonProcess, UnixClient, text_step, tool_step, write_scripted_home

PER_PARENT = 8  # the daemon's launch policy: maxTasks live runs per parent


def descendants(pid: int) -> list[int]:
    """Every live process under ``pid`` (from /proc's parent links)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def session_of(pid: int) -> str | None:
    """The ``--session`` of a ``shard agent --stdio`` process."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return argv[argv.index(b"--session") + 1].decode() if b"--session" in argv else None


def recorded(record: Path) -> list[str]:
    return record.read_text().splitlines() if record.exists() else []


async def request(client: UnixClient, message: dict[str, Any]) -> dict[str, Any]:
    response, _ = await client.request(message)
    if not response.get("success"):
        raise RuntimeError(f"{message['type']} failed: {response}")
    return response["data"]


async def new_parent(client: UnixClient, cwd: Path, n: int) -> str:
    data = await request(
        client, {"type": "agent.create", "id": f"p{n}", "cwd": str(cwd), "name": f"parent{n}"}
    )
    return str(data["agent_id"])


async def first_request_ms(client: UnixClient, parent: str, record: Path, n: int) -> float:
    """One child: create sent → its first provider request recorded; then wait for its run to end."""
    mark = f"bench-task-{n:04d}"
    create = {
        "type": "subagent.create",
        "id": f"c{n}",
        "parent_agent_id": parent,
        "name": f"child{n}",
        "task": mark,
    }
    t0 = time.perf_counter()
    await client.send(create)
    while not any(mark in line for line in recorded(record)):  # noqa: ASYNC110 (a file to poll)
        await asyncio.sleep(0.001)
    elapsed = (time.perf_counter() - t0) * 1000
    response = await client.until(lambda m: m.get("type") == "response" and m.get("id") == f"c{n}")
    run_id = response[-1]["data"]["runs"][0]["run_id"]
    await request(
        client, {"type": "subagent.wait", "id": f"w{n}", "parent_agent_id": parent, "handles": [run_id]}
    )
    return elapsed


def pss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no Pss for pid {pid}")


async def fanout(tmp: Path, children: int, flags: list[str]) -> float:
    """One subagent.create of ``children`` parallel tasks → the last child's first provider request."""
    home, cwd = tmp / f"fanout-home{len(flags)}", tmp / "cwd"
    write_scripted_home(
        home, [text_step("done")], loop=True, extra_toml=f"\n[subagents]\nmax_tasks = {children}\n"
    )
    daemon = await DaemonProcess.start(home, "--max-runtimes", str(children + 4), *flags)
    try:
        client = await daemon.unix()
        parent = await new_parent(client, cwd, 0)
        await first_request_ms(client, parent, home / "requests.jsonl", 0)  # the template is up
        marks = [f"fan-{i:03d}" for i in range(children)]
        create = {
            "type": "subagent.create",
            "id": "fan",
            "parent_agent_id": parent,
            "tasks": [{"name": m, "task": m} for m in marks],
            "strategy": "parallel",
        }
        t0 = time.perf_counter()
        await client.send(create)
        while not all(any(m in line for line in recorded(home / "requests.jsonl")) for m in marks):  # noqa: ASYNC110
            await asyncio.sleep(0.002)
        return (time.perf_counter() - t0) * 1000
    finally:
        await daemon.stop()


async def latency(tmp: Path, runs: int, flags: list[str]) -> dict[str, float]:
    home, cwd = tmp / f"latency-home{len(flags)}", tmp / "cwd"
    write_scripted_home(home, [text_step("done")], loop=True)
    daemon = await DaemonProcess.start(home, "--max-runtimes", str(runs + 4), *flags)
    try:
        client = await daemon.unix()
        parent = await new_parent(client, cwd, 0)
        await first_request_ms(client, parent, home / "requests.jsonl", 0)  # warm the page cache
        times = [
            await first_request_ms(client, parent, home / "requests.jsonl", n) for n in range(1, runs + 1)
        ]
    finally:
        await daemon.stop()
    return {
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
    }


async def memory(tmp: Path, children: int) -> dict[str, float]:
    home, cwd = tmp / "rss-home", tmp / "cwd"
    write_scripted_home(
        home,
        [tool_step("sleep", {"seconds": 600}), text_step("woke")],
        extensions=["shard.testing.tools:SleepTool"],
    )
    daemon = await DaemonProcess.start(home, "--max-runtimes", str(children + 4))
    try:
        client = await daemon.unix()
        n = 0
        for p in range(0, children, PER_PARENT):
            parent = await new_parent(client, cwd, p)
            names = [f"c{i}" for i in range(p, min(children, p + PER_PARENT))]
            tasks = [{"name": name, "task": f"sleep {name}"} for name in names]
            await request(
                client,
                {
                    "type": "subagent.create",
                    "id": f"c{p}",
                    "parent_agent_id": parent,
                    "tasks": tasks,
                    "strategy": "parallel",
                },
            )
            n += len(names)

        def sleeping() -> set[
            str
        ]:  # from every message read (a warm child is there before its create's answer)
            return {
                m["agent_id"]
                for m in client.seen
                if m.get("type") == "agent_activity" and m.get("phase") == "tool"
            }

        while len(sleeping()) < children:  # every child is live, in its tool
            await client.next()
        pid = daemon.proc.pid
        under = descendants(pid)
        db = sqlite3.connect(home / "state.db")
        sessions = {
            s for (s,) in db.execute("SELECT session_id FROM agents WHERE parent_agent_id IS NOT NULL")
        }
        db.close()
        kids = [p for p in under if session_of(p) in sessions]  # the children's runtimes
        daemon_mb = rss_mb(pid)
        children_mb = sum(rss_mb(p) for p in kids)
        children_pss = sum(pss_mb(p) for p in kids)
        total_mb = daemon_mb + sum(rss_mb(p) for p in under)
        total_pss = pss_mb(pid) + sum(pss_mb(p) for p in under)
        lines = [orjson.loads(line) for line in recorded(home / "requests.jsonl")]
    finally:
        await daemon.stop()
    return {
        "children": n,
        "children_runtimes": len(kids),
        "provider_requests": len(lines),
        "processes_under_daemon": len(under),
        "daemon_rss_mb": round(daemon_mb, 1),
        "daemon_and_children_rss_mb": round(daemon_mb + children_mb, 1),
        "per_child_mb": round(children_mb / max(1, len(kids)), 1),
        "daemon_and_everything_under_it_rss_mb": round(total_mb, 1),
        "per_child_pss_mb": round(children_pss / max(1, len(kids)), 1),
        "daemon_and_everything_under_it_pss_mb": round(total_pss, 1),
    }


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--children", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "cwd").mkdir()
        first = {}
        fan = {}
        for label, flags in (("warm", []), ("cold", ["--cold-start"])):
            first[label] = await latency(Path(tmp), args.runs, flags)
            fan[label] = round(await fanout(Path(tmp), args.children, flags), 1)
        rss = await memory(Path(tmp), args.children)
    print(f"subagent.create sent -> the child's first provider request, median of {args.runs} runs")
    for label in ("warm", "cold"):
        f = first[label]
        print(f"  {label} {f['median_ms']:7.1f} ms (min {f['min_ms']}, max {f['max_ms']})")
    print(f"{args.children} children in one subagent.create -> the last one's first provider request")
    for label in ("warm", "cold"):
        print(f"  {label} {fan[label]:7.1f} ms")
    print(f"{rss['children']} live children (each sleeping in a tool)")
    print(f"  daemon RSS {rss['daemon_rss_mb']:7.1f} MB")
    print(
        f"  daemon + its {rss['children_runtimes']} children's runtimes"
        f" {rss['daemon_and_children_rss_mb']:7.1f} MB ({rss['per_child_mb']} MB a child)"
    )
    print(
        f"  daemon + all {rss['processes_under_daemon']} processes under it (the parents' runtimes too)"
        f" {rss['daemon_and_everything_under_it_rss_mb']:7.1f} MB"
    )
    print(
        f"  PSS (shared pages divided): {rss['per_child_pss_mb']} MB a child,"
        f" {rss['daemon_and_everything_under_it_pss_mb']} MB the daemon and all under it"
    )
    out = save_results(
        "subagents",
        {"runs": args.runs, "create_to_first_request": first, "fanout_ms": fan, "live_children_rss": rss},
    )
    print(f"  saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))

"""Records the event streams the clients' folds are tested with (tests/fixtures/streams/*.json):
each scenario runs against a real ``shard daemon`` with the scripted provider, keeps the messages
one client received (hello and responses left out) and the state the Python SDK folds from them
at a few points (``shard.client.replay``). The web client's store folds the same files in its
unit tests, so the two clients cannot drift. Run after a protocol change, review the diff, commit:

    .venv/bin/python scripts/record_streams.py
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

from shard.client.replay import agent_view, fold
from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home
from shard.testing.daemon import UnixClient
from shard.testing.tools import TEST_TOOLS

STREAMS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "streams"
REPLY = "Done. **Bold**, then code:\n\n```python\nprint('hi')\n```\n\n- one\n- two\n"
SLOW = {
    "blocks": [{"type": "text", "text": "Streaming slowly, piece by piece, so a client can drop midway."}],
    "chunk": 4,
    "delay_ms": 40,
}
Scenario = Callable[[DaemonProcess, Path], Awaitable[tuple[str, str, list[dict[str, Any]], list[int]]]]


def kept(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("type") not in ("hello", "response")]


async def client(daemon: DaemonProcess) -> UnixClient:
    return await daemon.unix()  # hello read


async def create_and_attach(c: UnixClient, cwd: Path) -> str:
    created, _ = await c.request({"type": "agent.create", "id": "create", "cwd": str(cwd)})
    agent: str = created["data"]["agent_id"]
    await c.request({"type": "agent.attach", "id": "attach", "agent_id": agent})
    return agent


def since(c: UnixClient, start: int) -> list[dict[str, Any]]:
    return kept(c.seen[start:])


async def turn_with_permission(
    daemon: DaemonProcess, cwd: Path
) -> tuple[str, str, list[dict[str, Any]], list[int]]:
    c = await client(daemon)
    start = len(c.seen)
    agent = await create_and_attach(c, cwd)
    await c.send({"type": "prompt", "agent_id": agent, "message": "write a todo, then say so"})
    while True:  # both calls ask; each is allowed once
        m = await c.next()
        if m.get("type") == "permission_request":
            allow = next(ch["id"] for ch in m["choices"] if ch["intent"] == "allow")
            await c.send(
                {
                    "type": "permission_response",
                    "agent_id": agent,
                    "request_id": m["request_id"],
                    "choice_id": allow,
                }
            )
        if m.get("type") == "status" and m.get("status") == "idle" and m.get("agent_id") == agent:
            break
    events = since(c, start)
    asked = next(i for i, m in enumerate(events) if m["type"] == "permission_request") + 1
    await c.close()
    return (
        "One turn: a write and a touch each ask permission (allowed), then a markdown reply.",
        agent,
        events,
        [asked, len(events)],
    )


async def first_response_wins(
    daemon: DaemonProcess, cwd: Path
) -> tuple[str, str, list[dict[str, Any]], list[int]]:
    a, b = await client(daemon), await client(daemon)
    start = len(a.seen)
    agent = await create_and_attach(a, cwd)
    await b.request({"type": "agent.attach", "id": "attach-b", "agent_id": agent})
    await a.send({"type": "prompt", "agent_id": agent, "message": "write a todo"})
    request = (await a.until_type("permission_request"))[-1]
    await b.until_type("permission_request")
    deny = next(ch["id"] for ch in request["choices"] if ch["intent"] == "deny")
    allow = next(ch["id"] for ch in request["choices"] if ch["intent"] == "allow")
    first, _ = await b.request(
        {
            "type": "permission_response",
            "id": "b",
            "agent_id": agent,
            "request_id": request["request_id"],
            "choice_id": deny,
        }
    )
    await a.request(  # too late: refused, and nothing changes
        {
            "type": "permission_response",
            "id": "a",
            "agent_id": agent,
            "request_id": request["request_id"],
            "choice_id": allow,
        }
    )
    assert first["success"], first
    await a.idle(agent_id=agent)
    events = since(a, start)
    await a.close()
    await b.close()
    return (
        "Two clients are asked; the other one denies first; this one's later Allow changes nothing.",
        agent,
        events,
        [len(events)],
    )


async def reconnect_replay(
    daemon: DaemonProcess, cwd: Path
) -> tuple[str, str, list[dict[str, Any]], list[int]]:
    first = await client(daemon)
    start = len(first.seen)
    agent = await create_and_attach(first, cwd)
    await first.send({"type": "prompt", "agent_id": agent, "message": "stream slowly"})
    for _ in range(3):
        await first.until_type("message_delta")
    before = since(first, start)
    await first.close()  # the drop: what was in flight is the next attach's to tell
    again = await client(daemon)
    mark = len(again.seen)
    await again.request({"type": "agent.attach", "id": "attach", "agent_id": agent})
    await again.idle(agent_id=agent)
    events = before + since(again, mark)
    await again.close()
    return (
        "A drop mid-stream, then a re-attach: a fresh sync (the text so far), the rest, nothing twice.",
        agent,
        events,
        [len(before), len(before) + 1, len(events)],
    )


async def queued_messages(
    daemon: DaemonProcess, cwd: Path
) -> tuple[str, str, list[dict[str, Any]], list[int]]:
    c = await client(daemon)
    start = len(c.seen)
    agent = await create_and_attach(c, cwd)
    await c.send({"type": "prompt", "agent_id": agent, "message": "stream slowly"})
    await c.until_type("message_delta")
    await c.request(
        {
            "type": "prompt",
            "id": "f",
            "agent_id": agent,
            "message": "and then the tests",
            "streaming_behavior": "follow_up",
        }
    )
    events = since(c, start)
    queued = next(i for i, m in enumerate(events) if m["type"] == "queue_changed") + 1
    await c.until(lambda m: m.get("type") == "queue_changed" and not m["queue"])
    # the follow-up's own turn: its reply complete, then the agent idle
    await c.until(lambda m: m.get("type") == "message_complete" and "Tests next." in str(m["message"]))
    await c.idle(agent_id=agent)
    events = since(c, start)
    await c.close()
    return (
        "A follow-up queued while a turn streams: shown queued, then delivered as the next turn.",
        agent,
        events,
        [queued, len(events)],
    )


async def stale_epoch(daemon: DaemonProcess, cwd: Path) -> tuple[str, str, list[dict[str, Any]], list[int]]:
    c = await client(daemon)
    start = len(c.seen)
    agent = await create_and_attach(c, cwd)
    await c.send({"type": "prompt", "agent_id": agent, "message": "hello"})
    await c.idle(agent_id=agent)
    for pid in runtime_pids(daemon.home):
        os.kill(pid, signal.SIGKILL)
    await c.until_type("agent_exited")
    await c.send({"type": "prompt", "agent_id": agent, "message": "again"})
    await c.until(lambda m: m.get("type") == "sync" and (m.get("runtime_epoch") or 0) > 0)
    await c.idle(agent_id=agent)
    events = since(c, start)
    restarted = (
        next(i for i, m in enumerate(events) if m["type"] == "sync" and (m.get("runtime_epoch") or 0) > 0) + 1
    )
    await c.close()
    return (
        "The runtime is killed; the next prompt starts a replacement: its sync has a newer runtime_epoch.",
        agent,
        events,
        [restarted, len(events)],
    )


def runtime_pids(home: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--stdio" in argv and b"--home" in argv and argv[argv.index(b"--home") + 1] == str(home).encode():
            found.append(int(entry.name))
    return found


SCENARIOS: dict[str, tuple[list[dict[str, Any]], Scenario]] = {
    "turn_with_permission": (
        [
            tool_step("write", {"path": "todo.txt", "content": "milk\n"}, text="Writing it."),
            tool_step("touch", {"path": "done.txt"}),
            text_step(REPLY),
        ],
        turn_with_permission,
    ),
    "first_response_wins": (
        [tool_step("touch", {"path": "done.txt"}), text_step("Not written, then.")],
        first_response_wins,
    ),
    "reconnect_replay": ([SLOW], reconnect_replay),
    "queued_messages": ([SLOW, text_step("Tests next.")], queued_messages),
    "stale_epoch": ([text_step("Hi."), text_step("Back again.")], stale_epoch),
}


async def record(name: str, steps: list[dict[str, Any]], scenario: Scenario, root: Path) -> Path:
    home = write_scripted_home(root / name / "home", steps, extensions=TEST_TOOLS)
    cwd = root / name / "project"
    cwd.mkdir(parents=True)
    daemon = await DaemonProcess.start(home)
    try:
        description, agent, events, points = await scenario(daemon, cwd)
    finally:
        await daemon.kill()
    checkpoints = [{"after": n, "expected": agent_view(fold(agent, events[:n]))} for n in points]
    out = STREAMS / f"{name}.json"
    body = {"description": description, "agent_id": agent, "events": events, "checkpoints": checkpoints}
    out.write_bytes(orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    return out


async def main(names: list[str]) -> None:
    STREAMS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="shard-streams-") as tmp:
        for name in names or list(SCENARIOS):
            steps, scenario = SCENARIOS[name]
            path = await record(name, steps, scenario, Path(tmp))
            print(f"{path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

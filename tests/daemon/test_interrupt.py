"""Ctrl-C on a real ``shard daemon`` never waits silently: it says what it waits for, tells its
runtimes to stop their work (a streaming turn and a pending permission are aborted and saved), kills
one that does not stop after the grace, and exits — with every session on disk consistent.

Durations are not asserted (machines are noisy): the order of what the daemon says and does is,
with a generous bound on the exit as a hang detector only."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import orjson
from daemon_helpers import attach, create_agent, runtime_pids

from shard.testing import DaemonProcess
from shard.testing.reader import MessageReader

HANG = 8.0  # seconds: only a hang detector; the stop itself takes well under 2 s

STALL = {"steps": [{"blocks": [{"type": "text", "text": "partial answer "}], "stall": True}]}
WRITE = {"type": "tool_call", "name": "write", "args": {"path": "a.txt", "content": "x\n"}}
ASK = {"steps": [{"blocks": [WRITE]}, {"blocks": [{"type": "text", "text": "done"}]}]}
STUCK = {"steps": [{"blocks": [{"type": "tool_call", "name": "stuck", "args": {"seconds": 120}}]}]}


def _home(home: Path, scripts: dict[str, dict[str, Any]], extra: str = "") -> Path:
    """A SHARD_HOME with one scripted provider per script (``<name>/m``)."""
    home.mkdir(parents=True, mode=0o700)
    tables = []
    for name, script in scripts.items():
        (home / f"{name}.json").write_bytes(orjson.dumps(script))
        tables.append(f'[[providers]]\nname = "{name}"\nkind = "scripted"\nscript = "{name}.json"\n')
        tables.append(f'record = "{name}-requests.jsonl"\nmodels = ["m"]\n')
    (home / "config.toml").write_text(f'default_model = "{next(iter(scripts))}/m"\n{extra}' + "".join(tables))
    return home


async def _prompted(client: MessageReader, project: Path, model: str) -> tuple[str, str]:
    """A new agent on ``model``, attached interactively and prompted: (agent_id, session_id)."""
    agent = await create_agent(client, project, model=model)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "go"})
    return agent, sync["session_id"]


async def _heard(client: MessageReader, kind: str, agent_id: str) -> None:
    """Wait until ``client`` has received a ``kind`` event of ``agent_id`` (now or before)."""

    def match(m: dict[str, Any]) -> bool:
        return m.get("type") == kind and m.get("agent_id") == agent_id

    if not any(match(m) for m in client.seen):
        await client.until(match)


async def _interrupted(daemon: DaemonProcess) -> int:
    daemon.proc.send_signal(signal.SIGINT)
    code = await asyncio.wait_for(daemon.proc.wait(), HANG)
    await daemon.kill()  # collects the rest of its output
    return code


async def _drain(client: MessageReader) -> list[dict[str, Any]]:
    """Everything until the daemon closes the connection."""
    out = []
    try:
        while True:
            out.append(await client.next())
    except EOFError:
        return out


def _entries(home: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's entries; every line whole (LF-terminated) and valid JSON."""
    data = (home / "sessions" / session_id / "session.jsonl").read_bytes()
    assert data.endswith(b"\n"), "a half-written last line"
    return [orjson.loads(line) for line in data.splitlines()]


def _said(daemon: DaemonProcess) -> list[str]:
    """What the daemon printed after it started listening."""
    return [line for line in daemon.output[len(daemon.startup) :] if line.startswith("shard daemon:")]


async def test_ctrl_c_says_what_it_waits_for_and_stops_a_stream_and_a_pending_permission(
    tmp_path: Path, project: Path
) -> None:
    """One runtime streams (its provider stalls mid-answer), one waits for a permission answer.
    SIGINT: the daemon says it stops 2 runtimes and what each is doing, each runtime stops its own
    turn when told (none is killed), every client sees both turns end before its connection
    closes, the daemon exits 0 with no runtime left, and both sessions are consistent: the partial
    reply is kept and marked as not finished, the call that waited for permission has a result
    saying it did not run — a restarted daemon takes the next prompt on that session."""
    home = _home(tmp_path / "home", {"slow": STALL, "ask": ASK})
    daemon = await DaemonProcess.start(home)
    client, ws = await daemon.unix(), await daemon.ws()
    streaming, streaming_session = await _prompted(client, project, "slow/m")
    asking, asking_session = await _prompted(client, project, "ask/m")
    await _heard(client, "message_delta", streaming)
    await _heard(client, "permission_request", asking)

    assert await _interrupted(daemon) == 0
    said = _said(daemon)
    assert said == [
        "shard daemon: stopping 2 runtimes (1 streaming, 1 waiting for a permission answer)…"
        " (Ctrl-C again stops them at once)",
        "shard daemon: stopped",
    ], daemon.output
    assert runtime_pids(home) == []
    rest = await _drain(client)
    for agent in (streaming, asking):
        mine = [m["type"] for m in rest if m.get("agent_id") == agent]
        assert "turn_end" in mine, (agent, mine)
        last = [m for m in rest if m.get("agent_id") == agent and m["type"] == "status"][-1]
        assert last["status"] == "idle"
    await _drain(ws)  # the daemon closed the WebSocket too (else this times out)

    partial = [e for e in _entries(home, streaming_session) if e["kind"] == "message"][-1]
    assert partial["message"]["role"] == "assistant"
    assert partial["message"]["content"] == [{"type": "text", "text": "partial answer "}]
    assert partial.get("incomplete") or partial.get("stop_reason") not in (None, "end_turn")
    *_, call, result = [e for e in _entries(home, asking_session) if e["kind"] in ("message", "tool_result")]
    [tool_call] = [b for b in call["message"]["content"] if b["type"] == "tool_call"]
    assert (result["kind"], result["tool_call_id"], result["is_error"]) == (
        "tool_result",
        tool_call["id"],
        True,
    )
    assert not (project / "a.txt").exists()

    again = await DaemonProcess.start(home)
    try:
        client = await again.unix()
        await attach(client, asking)
        await client.send({"type": "prompt", "agent_id": asking, "message": "go on"})
        read = await client.idle(agent_id=asking)
        assert not [m for m in read if m["type"] == "error"], read
        answer = [m for m in read if m["type"] == "message_complete"][-1]["message"]
        assert answer["content"] == [{"type": "text", "text": "done"}]
    finally:
        await again.kill()


async def test_a_runtime_that_does_not_stop_is_killed_after_the_grace(tmp_path: Path, project: Path) -> None:
    """A runtime blocked in a tool cannot act on being told to stop: once the grace is over the
    daemon says it kills it, kills it and exits 0. It was asked first; its session stays valid
    JSONL (nothing half-written)."""
    home = _home(
        tmp_path / "home", {"stuck": STUCK}, '[tools]\nextensions = ["shard.testing.tools:StuckTool"]\n'
    )
    daemon = await DaemonProcess.start(home)
    client = await daemon.unix()
    agent, session = await _prompted(client, project, "stuck/m")
    await _heard(client, "tool_call", agent)

    assert await _interrupted(daemon) == 0
    assert _said(daemon) == [
        "shard daemon: stopping 1 runtime (1 streaming)… (Ctrl-C again stops them at once)",
        f"shard daemon: 1 runtime did not stop within 1.5 s: killing {agent}",
        "shard daemon: stopped",
    ], daemon.output
    assert runtime_pids(home) == []
    kinds = [e["kind"] for e in _entries(home, session)]  # every line a whole JSON entry
    assert kinds[-2:] == ["message", "tool_start"], kinds  # killed in its tool: the call was its last word

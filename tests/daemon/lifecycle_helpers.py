"""Helpers for the agent lifecycle tests (test_lifecycle.py, test_lifecycle_stop.py): the daemon's
manifest and session files, requests expected to fail, and waits on runtime states."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from shard.testing import AgentProcess, tool_step
from shard.testing.reader import MessageReader

TWO_MODELS = [{"id": "m", "context_window": 100_000}, {"id": "m2", "context_window": 50_000}]
TOUCH = tool_step("touch", {"path": "made.txt"})
AGENT_STATUS_CHANGED_KEYS = {"type", "agent_id", "status", "runtime_state", "detail"}
AGENT_EXITED_KEYS = {"type", "agent_id", "runtime_state", "reason", "exit_code"}


def session_file(home: Path, session_id: str) -> Path:
    return home / "sessions" / session_id / "session.jsonl"


def manifest_rows(home: Path, **where: str) -> list[dict[str, Any]]:
    """Rows of the daemon's agents table (read-only, beside the running daemon)."""
    db = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        clause = " AND ".join(f"{k} = ?" for k in where) or "1"
        return [dict(r) for r in db.execute(f"SELECT * FROM agents WHERE {clause}", tuple(where.values()))]
    finally:
        db.close()


async def fails(client: MessageReader, message: dict[str, Any], code: str) -> dict[str, Any]:
    resp, _ = await client.request(message)
    assert resp["success"] is False, resp
    assert resp["error"]["code"] == code, resp
    assert resp["command"] == message["type"]
    return resp


async def listed(client: MessageReader) -> dict[str, dict[str, Any]]:
    resp, _ = await client.request({"type": "agent.list", "id": "list"})
    assert resp["success"] is True, resp
    return {a["agent_id"]: a for a in resp["data"]["agents"]}


async def legacy_session(home: Path, cwd: Path, message: str) -> str:
    """A session written by a plain ``shard agent --stdio`` (no daemon): one prompt, one answer."""
    agent = await AgentProcess.start(home, cwd)
    try:
        _, sync = await agent.handshake()
        await agent.send({"type": "prompt", "message": message})
        await agent.idle()
        assert await agent.finish() == 0
    finally:
        await agent.kill()
    return sync["session_id"]


def state_changes(messages: list[dict[str, Any]], agent_id: str) -> list[str]:
    return [
        m["runtime_state"]
        for m in messages
        if m["type"] == "agent_status_changed" and m["agent_id"] == agent_id
    ]


async def until_runtime_state(client: MessageReader, agent_id: str, state: str, within: float = 30) -> Any:
    return await client.until(
        lambda m: (
            m.get("type") == "agent_status_changed"
            and m.get("agent_id") == agent_id
            and m.get("runtime_state") == state
        ),
        within,
    )


async def until_stopped(client: MessageReader, agent_id: str, before: list[dict[str, Any]]) -> None:
    """Runtime state ``stopped`` for ``agent_id``: already among ``before`` or still to come."""
    if "stopped" not in state_changes(before, agent_id):
        await until_runtime_state(client, agent_id, "stopped")


async def drain(client: MessageReader) -> list[dict[str, Any]]:
    """Everything until the daemon closes the connection."""
    out = []
    try:
        while True:
            out.append(await client.next())
    except EOFError:
        return out


def break_config(home: Path) -> bytes:
    """Make config.toml unusable (an unknown table) after the daemon has read it: the daemon keeps
    the catalog it knew, and the next runtime refuses to start. Returns the good text."""
    path = home / "config.toml"
    good = path.read_bytes()
    path.write_bytes(good + b"\n[no_such_table]\n")
    return good

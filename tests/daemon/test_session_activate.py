"""``session.activate`` (PROTOCOL §9.2 fork: "a session-first client refreshes session.list,
selects the returned session_id, then uses session.activate to adopt/start the forked session"),
against a real daemon: the fork, picked from a refreshed list, gets an agent of its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from daemon_helpers import attach, create_agent

from shard.testing import text_step


async def _op(client: Any, agent_id: str, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "session_op", "id": f"op-{op}", "agent_id": agent_id, "op": op}
    if args is not None:
        message["args"] = args
    resp, _ = await client.request(message)
    return resp


async def _activate(client: Any, agent_id: str, **fields: Any) -> dict[str, Any]:
    message = {"type": "session.activate", "id": "activate", "agent_id": agent_id, **fields}
    resp, _ = await client.request(message)
    return resp


def _sandbox_of(home: Path, agent_id: str) -> str | None:
    with sqlite3.connect(home / "state.db") as db:
        row = db.execute("SELECT sandbox FROM agents WHERE agent_id = ?", (agent_id,)).fetchone()
    assert row is not None, agent_id
    return row[0]


async def test_a_fork_picked_from_a_refreshed_list_is_activated_as_an_agent(daemon_factory, project, home):
    """Fork at the first reply; the fork's session_id is in a refreshed ``session_op list``;
    ``session.activate`` answers with a new agent bound to it (created), broadcast to the connection, whose
    window stops at the fork point and which answers a prompt; activating again gives the same
    agent (not created); the source agent keeps its own session and sandbox goes along.

    Covers: R9.2.65
    """
    daemon = await daemon_factory(
        [text_step("first answer"), text_step("second answer"), text_step("a fork's answer")]
    )
    client = await daemon.unix()
    source = await create_agent(client, project, sandbox="off")
    _, sync = await attach(client, source)
    for message in ("first question", "second question"):
        await client.send({"type": "prompt", "agent_id": source, "message": message})
        await client.idle(agent_id=source)
    reply = next(m for m in client.seen if m["type"] == "message_complete" and m.get("agent_id") == source)
    fork = await _op(client, source, "fork", {"from_entry_id": reply["message_id"]})
    assert fork["success"] is True, fork
    fork_session = fork["data"]["session_id"]

    listed = await _op(client, source, "list")
    assert fork_session in [s["session_id"] for s in listed["data"]["sessions"]]

    activated = await _activate(client, source, session_id=fork_session)
    assert activated["success"] is True, activated
    assert activated["data"]["session_id"] == fork_session
    assert activated["data"]["created"] is True
    forked = activated["data"]["agent_id"]
    assert forked != source
    spawned = [m for m in client.seen if m["type"] == "agent_spawned" and m["agent_id"] == forked]
    assert [m["info"]["session_id"] for m in spawned] == [fork_session]  # told before the answer
    assert _sandbox_of(home, forked) == "off" == _sandbox_of(home, source)

    _, fsync = await attach(client, forked)
    assert fsync["session_id"] == fork_session
    texts = [b.get("text") for m in fsync["live_window"]["messages"] for b in m["content"]]
    assert "first question" in texts
    assert "second question" not in texts
    await client.send({"type": "prompt", "agent_id": forked, "message": "go on"})
    await client.idle(agent_id=forked)
    assert any(m["type"] == "message_complete" and m.get("agent_id") == forked for m in client.seen)

    again = await _activate(client, source, session_id=fork_session)
    assert again["data"] == {"agent_id": forked, "session_id": fork_session, "created": False}
    agents = (await client.request({"type": "agent.list", "id": "l"}))[0]["data"]["agents"]
    assert sorted(a["agent_id"] for a in agents) == sorted([source, forked])
    assert {a["agent_id"]: a["session_id"] for a in agents}[source] == sync["session_id"]


async def test_activate_refuses_what_it_cannot_adopt(daemon_factory, project, tmp_path):
    """No session_id: INVALID_REQUEST; a session that does not exist: NOT_FOUND; a session of another
    folder: INVALID_REQUEST; each leaves the agents as they were, and the connection serves on.

    Covers: R9.2.65
    """
    daemon = await daemon_factory([text_step("hi")])
    client = await daemon.unix()
    source = await create_agent(client, project)
    await attach(client, source)
    other_dir = tmp_path / "elsewhere"
    other_dir.mkdir()
    other = await create_agent(client, other_dir)
    other_session = (await attach(client, other))[1]["session_id"]

    missing = await _activate(client, source)
    assert missing["success"] is False
    assert missing["error"]["code"] == "INVALID_REQUEST", missing["error"]
    unknown = await _activate(client, source, session_id="sess-nope")
    assert unknown["success"] is False
    assert unknown["error"]["code"] == "NOT_FOUND", unknown["error"]
    foreign = await _activate(client, source, session_id=other_session)
    assert foreign["success"] is False
    assert foreign["error"]["code"] == "INVALID_REQUEST", foreign["error"]
    agents = (await client.request({"type": "agent.list", "id": "l"}))[0]["data"]["agents"]
    assert sorted(a["agent_id"] for a in agents) == sorted([source, other])
    listed = await _op(client, source, "list")
    assert listed["success"] is True

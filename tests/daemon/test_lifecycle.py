"""Agent lifecycle on a real ``shard daemon`` (PROTOCOL §3, §6.4, §8, §10.1, §10.2; DESIGN §2):
managed create and its manifest fields, legacy adoption, attach/status/detach, terminate, kill,
daemon shutdown, idle reaping and per-agent routing errors. Real processes, files and SQLite."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

from daemon_helpers import attach, connect, create_agent, runtime_pids

from shard.testing import AgentProcess, recorded_requests, text_step, tool_step, write_scripted_home
from shard.testing.agent_process import shard_command
from shard.testing.reader import MessageReader
from shard.testing.tools import TEST_TOOLS

TWO_MODELS = [{"id": "m", "context_window": 100_000}, {"id": "m2", "context_window": 50_000}]
TOUCH = tool_step("touch", {"path": "made.txt"})
AGENT_STATUS_CHANGED_KEYS = {"type", "agent_id", "status", "runtime_state", "detail"}
AGENT_EXITED_KEYS = {"type", "agent_id", "runtime_state", "reason", "exit_code"}


# --- helpers ------------------------------------------------------------------------------------


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


# --- managed create -----------------------------------------------------------------------------


async def test_create_honours_manifest_and_broadcasts_spawn(daemon_factory, transport, home, project):
    """A managed agent.create answers {agent_id}; the runtime it starts has the requested cwd, model
    (given as provider + model), mode, tool allow-list and name; the agent is announced with
    agent_spawned {agent_id, info} to every connection, attached or not, the creator included; each
    managed create gets a fresh session id; a root's durable depth is 0.

    Covers: R10.1.3, R10.1.4, R10.1.7, R10.1.17, R10.2.11, R10.2.20
    """
    steps = [tool_step("sleep", {"seconds": 0}), text_step("no sleeping for me")]
    daemon = await daemon_factory(steps, models=TWO_MODELS)
    creator = await connect(daemon, transport)
    bystander = await connect(daemon, "websocket" if transport == "unix" else "unix")
    link = project.parent / "project-link"
    link.symlink_to(project)
    resp, before = await creator.request(
        {
            "type": "agent.create",
            "id": "c1",
            "cwd": str(link),
            "provider": "test",
            "model": "m2",
            "mode": "plan",
            "tools": ["read"],
            "skills": [],
            "headless_policy": "deny",
            "name": "alpha",
        }
    )
    assert resp["success"] is True, resp
    assert set(resp["data"]) == {"agent_id"}
    agent = resp["data"]["agent_id"]
    assert agent.startswith("agent-")
    for client, seen in ((creator, before), (bystander, [])):
        spawned = (
            next((m for m in seen if m["type"] == "agent_spawned"), None)
            or (await client.until_type("agent_spawned"))[-1]
        )
        assert set(spawned) == {"type", "agent_id", "info"}
        assert spawned["agent_id"] == agent
        info = spawned["info"]
        assert info["agent_id"] == agent
        assert info["name"] == "alpha"
        assert info["cwd"] == str(project.resolve()), "cwd canonicalized (symlink resolved)"
        assert info["model"] == "test/m2"
        assert info["mode"] == "plan"
        assert "parent_agent_id" not in info
    assert len(runtime_pids(home)) == 1, "create started the runtime"

    _, sync = await attach(creator, agent)
    assert sync["mode"] == "plan"
    first_session = sync["session_id"]
    assert first_session.startswith("sess-")
    await creator.send({"type": "prompt", "agent_id": agent, "message": "nap"})
    done = await creator.idle(agent_id=agent)
    result = next(m for m in done if m["type"] == "tool_result")
    assert result["is_error"] is True, "sleep is not in the allow-list"
    (request, *_) = recorded_requests(home)
    assert request["model"] in ("m2", "test/m2")
    assert "read" in request["tools"]
    assert set(request["tools"]) <= {"read", "recall"}, request["tools"]

    second = await create_agent(creator, project)
    _, sync2 = await attach(creator, second)
    assert sync2["session_id"].startswith("sess-")
    assert sync2["session_id"] != first_session, "a fresh session id for each managed create"
    assert sync2["mode"] == "build", "the first agent's mode is not the default"
    rows = {r["agent_id"]: r for r in manifest_rows(home)}
    assert rows[agent]["session_id"] == first_session
    assert rows[second]["session_id"] == sync2["session_id"]
    assert rows[agent]["depth"] == rows[second]["depth"] == 0


async def test_create_with_an_empty_tool_allow_list_offers_no_tools(daemon_factory, home, project):
    """tools: [] is an allow-list naming nothing: the model is offered none of the tools (an
    allow-list never widens to "all tools").

    Covers: R10.1.4
    """
    daemon = await daemon_factory([text_step("nothing to do")])
    client = await daemon.unix()
    agent = await create_agent(client, project, tools=[])
    await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "hi"})
    await client.idle(agent_id=agent)
    (request,) = recorded_requests(home)
    offered = set(request["tools"]) - {"recall"}
    assert offered == set(), f"an empty allow-list offered {sorted(offered)}"


async def test_create_honours_headless_policy(daemon_factory, project, tmp_path):
    """headless_policy is the agent's: with only an observer attached (no responder), a "deny"
    agent has its write refused at once, while a "queue" agent keeps the request pending until an
    interactive client attaches and answers it.

    Covers: R10.1.4, R10.1.5
    """
    daemon = await daemon_factory([TOUCH, text_step("done")])
    client = await daemon.unix()
    other = tmp_path / "other"
    other.mkdir()
    denier = await create_agent(client, project, headless_policy="deny")
    queuer = await create_agent(client, other, headless_policy="queue")
    for agent in (denier, queuer):
        await attach(client, agent, role="observer")
    for agent in (denier, queuer):
        await client.send({"type": "prompt", "agent_id": agent, "message": "write"})

    def reached(agent: str, status: str) -> bool:
        return any(
            m["type"] == "status" and m.get("agent_id") == agent and m["status"] == status
            for m in client.seen
        )

    await client.until(lambda _: reached(denier, "idle") and reached(queuer, "waiting_for_permission"))
    assert not (project / "made.txt").exists()
    denied = next(m for m in client.seen if m["type"] == "tool_result" and m["agent_id"] == denier)
    assert denied["is_error"] is True
    resolved = next(m for m in client.seen if m["type"] == "permission_resolved" and m["agent_id"] == denier)
    assert resolved["decision"] == "deny"
    assert not any(m["type"] == "permission_resolved" and m["agent_id"] == queuer for m in client.seen)
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": queuer})
    assert status["data"]["agents"][0]["status"] == "waiting_for_permission"
    answerer = await daemon.ws()
    _, sync = await attach(answerer, queuer)
    (pending,) = sync["pending_requests"]
    await answerer.send(
        {
            "type": "permission_response",
            "agent_id": queuer,
            "request_id": pending["request_id"],
            "decision": "allow",
        }
    )
    await answerer.idle(agent_id=queuer)
    assert (other / "made.txt").exists()


async def test_create_child_agent_and_unknown_parent(daemon_factory, home, project):
    """parent_agent_id makes a subagent (AgentInfo.parent_agent_id, one level deeper); an unknown
    parent is NOT_FOUND and creates nothing; a root's durable depth is 0 whatever a client sends.

    Covers: R10.1.8, R10.1.7, R10.1.4, R8.8, R11.0.20
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    parent = await create_agent(client, project, name="parent")
    child = await create_agent(client, project, name="child", parent_agent_id=parent)
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": child})
    (info,) = status["data"]["agents"]
    assert info["parent_agent_id"] == parent
    agents = await listed(client)
    assert "parent_agent_id" not in agents[parent]
    rows = {r["agent_id"]: r for r in manifest_rows(home)}
    assert rows[parent]["depth"] == 0
    assert rows[child]["depth"] == 1

    await fails(
        client,
        {"type": "agent.create", "id": "orphan", "cwd": str(project), "parent_agent_id": "agent-0000"},
        "NOT_FOUND",
    )
    assert set(await listed(client)) == {parent, child}
    assert not any(m["type"] == "agent_spawned" and m["info"].get("name") is None for m in client.seen)

    resp, _ = await client.request({"type": "agent.create", "id": "deep", "cwd": str(project), "depth": 7})
    if resp["success"]:  # the daemon may refuse a client-set depth; if it takes the create, it ignores it
        (row,) = manifest_rows(home, agent_id=resp["data"]["agent_id"])
        assert row["depth"] == 0
    else:
        assert resp["error"]["code"] == "INVALID_REQUEST"


async def test_create_whose_runtime_cannot_start_fails_and_can_be_retried(daemon_factory, home, project):
    """A runtime that exits before it is ready (config.toml broken after the daemon read it: an
    unknown model is refused before anything is written, tests/security/test_validate_first.py)
    makes agent.create fail with RUNTIME_START_FAILED; the agent is kept (listed, runtime failed), an
    attach while the cause remains fails the same way, and once config.toml is mended an attach
    starts it.

    Covers: R8.14, R6.4.8, R6.4.9, R10.1.3
    """
    daemon = await daemon_factory([text_step("from the mended config")])
    client = await daemon.unix()
    good = break_config(home)
    resp, seen = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    assert resp["success"] is False
    assert resp["error"]["code"] == "RUNTIME_START_FAILED", resp
    spawned = next(m for m in seen if m["type"] == "agent_spawned")
    agent = spawned["agent_id"]
    assert resp["error"]["data"]["agent_id"] == agent, "the failure names the agent kept for a retry"
    assert runtime_pids(home) == []
    assert (await listed(client))[agent]["runtime_state"] == "failed"
    await fails(client, {"type": "agent.attach", "id": "a1", "agent_id": agent}, "RUNTIME_START_FAILED")

    (home / "config.toml").write_bytes(good)
    resp, _ = await client.request({"type": "agent.attach", "id": "a2", "agent_id": agent})
    assert resp["success"] is True, resp
    sync = (await client.until(lambda m: m["type"] == "sync" and m.get("agent_id") == agent))[-1]
    assert sync["runtime_epoch"] == 0, "the first generation that became ready"
    assert (await listed(client))[agent]["runtime_state"] == "running"
    await client.send({"type": "prompt", "agent_id": agent, "message": "boo"})
    await client.idle(agent_id=agent)
    assert len(recorded_requests(home)) == 1


def break_config(home: Path) -> bytes:
    """Make config.toml unusable (an unknown table) after the daemon has read it: the daemon keeps
    the catalog it knew, and the next runtime refuses to start. Returns the good text."""
    path = home / "config.toml"
    good = path.read_bytes()
    path.write_bytes(good + b"\n[no_such_table]\n")
    return good


# --- legacy adoption ------------------------------------------------------------------------------


async def test_adopt_legacy_session(daemon_factory, home, project, tmp_path):
    """agent.create with session_id adopts a session written without the daemon: cwd is
    canonicalized (a symlink and a `..` path name the owner) and checked against the session's own
    directory (another one is INVALID_REQUEST); one manifest row binds the session; adoption does not
    touch the JSONL (byte for byte, until new work appends to it); adopting it again is
    INVALID_REQUEST.

    Covers: R10.1.9, R10.1.11, R10.1.12, R10.1.13, R10.1.4
    """
    write_scripted_home(
        home, [text_step("legacy answer"), text_step("adopted answer")], extensions=TEST_TOOLS
    )
    session_id = await legacy_session(home, project, "from before the daemon")
    path = session_file(home, session_id)
    original = path.read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)

    daemon = await daemon_factory(None)
    client = await daemon.unix()
    adopt = {"type": "agent.create", "id": "adopt", "session_id": session_id}
    await fails(client, {**adopt, "cwd": str(other)}, "INVALID_REQUEST")
    assert await listed(client) == {}
    await fails(client, {**adopt, "cwd": str(other / ".." / "link" / "..")}, "INVALID_REQUEST")
    resp, _ = await client.request({**adopt, "cwd": str(link / ".." / "link"), "name": "old"})
    assert resp["success"] is True, resp
    agent = resp["data"]["agent_id"]
    info = (await listed(client))[agent]
    assert info["cwd"] == str(project.resolve())
    assert info["name"] == "old"
    (row,) = manifest_rows(home, session_id=session_id)
    assert row["agent_id"] == agent
    assert path.read_bytes() == original, "adoption rewrote the session JSONL"

    _, sync = await attach(client, agent)
    assert sync["session_id"] == session_id
    texts = [b.get("text") for m in sync["live_window"]["messages"] for b in m["content"]]
    assert texts == ["from before the daemon", "legacy answer"]
    assert path.read_bytes() == original, "restoring the adopted session rewrote it"

    await fails(client, {**adopt, "id": "again", "cwd": str(project)}, "INVALID_REQUEST")
    assert list(await listed(client)) == [agent]
    assert len(manifest_rows(home, session_id=session_id)) == 1

    await client.send({"type": "prompt", "agent_id": agent, "message": "and now?"})
    await client.idle(agent_id=agent)
    grown = path.read_bytes()
    assert grown.startswith(original), "new work only appends"
    assert b"adopted answer" in grown[len(original) :]


async def test_adoption_reports_the_model_and_mode_the_runtime_uses(daemon_factory, home, project):
    """Adopting with model and mode: whatever the daemon makes of them (applied to the restored
    session, or refused, or left to the session's own), AgentInfo tells the truth — its model is the
    one the provider is called with and its mode the one sync reports; the JSONL is only appended to.

    Covers: R10.1.4, R10.1.9, R10.1.12, R10.1.26
    """
    write_scripted_home(
        home,
        [text_step("legacy answer"), text_step("adopted answer")],
        models=TWO_MODELS,
        extensions=TEST_TOOLS,
    )
    session_id = await legacy_session(home, project, "made with test/m in build mode")
    original = session_file(home, session_id).read_bytes()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    resp, _ = await client.request(
        {
            "type": "agent.create",
            "id": "adopt",
            "cwd": str(project),
            "session_id": session_id,
            "model": "test/m2",
            "mode": "plan",
        }
    )
    if not resp["success"]:  # refusing what adoption cannot honour is fine too
        assert resp["error"]["code"] == "INVALID_REQUEST", resp
        return
    agent = resp["data"]["agent_id"]
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "which model?"})
    await client.idle(agent_id=agent)
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": agent})
    (info,) = status["data"]["agents"]
    used = recorded_requests(home)[-1]["model"]
    assert info.get("model", "").split("/")[-1] == used.split("/")[-1], (info, used)
    assert info.get("mode", "build") == sync["mode"], (info, sync["mode"])
    assert session_file(home, session_id).read_bytes().startswith(original)


async def test_adopt_missing_or_malformed_session(daemon_factory, home, project):
    """Adoption of a session that is not there is NOT_FOUND (a filesystem path is no session id);
    of one whose header is not its header, SESSION_CORRUPT; of one whose transcript is damaged past
    the header (found when the runtime loads it), SESSION_CORRUPT too, and the file is left as it
    was. A refused header leaves no agent behind.

    Covers: R10.1.14, R10.1.15, R10.1.10, R8.15, R8.8
    """
    write_scripted_home(home, [text_step("legacy")], extensions=TEST_TOOLS)
    real = await legacy_session(home, project, "real one")
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    adopt = {"type": "agent.create", "id": "adopt", "cwd": str(project)}

    await fails(client, {**adopt, "session_id": "sess-0123456789abcdef"}, "NOT_FOUND")
    for as_path in (str(session_file(home, real)), str(session_file(home, real).parent), f"../{real}"):
        resp, _ = await client.request({**adopt, "session_id": as_path})
        assert resp["success"] is False, f"adopted a session named by the path {as_path}"
        assert resp["error"]["code"] in ("NOT_FOUND", "INVALID_REQUEST"), resp

    garbage = "sess-badheader0000000"
    session_file(home, garbage).parent.mkdir(parents=True)
    session_file(home, garbage).write_bytes(b"this is not json\n")
    await fails(client, {**adopt, "session_id": garbage}, "SESSION_CORRUPT")

    borrowed = "sess-borrowedheader00"
    session_file(home, borrowed).parent.mkdir(parents=True)
    session_file(home, borrowed).write_bytes(session_file(home, real).read_bytes())  # names `real`
    await fails(client, {**adopt, "session_id": borrowed}, "SESSION_CORRUPT")

    assert await listed(client) == {}, "a refused adoption leaves no agent"
    assert manifest_rows(home) == []

    damaged = "sess-damagedmiddle000"
    lines = session_file(home, real).read_bytes().replace(real.encode(), damaged.encode()).splitlines()
    assert len(lines) >= 3
    lines[1] = b'{"broken": '
    session_file(home, damaged).parent.mkdir(parents=True)
    session_file(home, damaged).write_bytes(b"\n".join(lines) + b"\n")
    before = session_file(home, damaged).read_bytes()
    await fails(client, {**adopt, "session_id": damaged}, "SESSION_CORRUPT")
    assert session_file(home, damaged).read_bytes() == before


async def test_adoption_runtime_failure_keeps_the_binding(daemon_factory, home, project):
    """A runtime that cannot start during adoption (config.toml broken) is RUNTIME_START_FAILED;
    the manifest (written before the start) keeps the binding: the agent is listed, the session is
    not adoptable again, its bytes are untouched, an attach fails the same way while the cause
    remains, and once it is fixed an attach restores the adopted session.

    Covers: R10.1.16, R10.1.11, R10.1.12, R6.4.8, R6.4.9, R8.14
    """
    write_scripted_home(home, [text_step("legacy answer"), text_step("x")], extensions=TEST_TOOLS)
    session_id = await legacy_session(home, project, "before the breakage")
    original = session_file(home, session_id).read_bytes()
    config = home / "config.toml"
    good = config.read_text()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    config.write_text("default_model = [this is not toml\n")

    resp, seen = await client.request(
        {"type": "agent.create", "id": "adopt", "cwd": str(project), "session_id": session_id}
    )
    assert resp["success"] is False
    assert resp["error"]["code"] == "RUNTIME_START_FAILED", resp
    agent = next(m for m in seen if m["type"] == "agent_spawned")["agent_id"]
    (row,) = manifest_rows(home, session_id=session_id)
    assert row["agent_id"] == agent
    assert (await listed(client))[agent]["runtime_state"] == "failed"
    assert runtime_pids(home) == []
    await fails(client, {"type": "agent.attach", "id": "a1", "agent_id": agent}, "RUNTIME_START_FAILED")
    await fails(
        client,
        {"type": "agent.create", "id": "again", "cwd": str(project), "session_id": session_id},
        "INVALID_REQUEST",
    )
    assert session_file(home, session_id).read_bytes() == original

    config.write_text(good)
    _, sync = await attach(client, agent)
    assert sync["session_id"] == session_id
    assert [m["content"][0]["text"] for m in sync["live_window"]["messages"]] == [
        "before the breakage",
        "legacy answer",
    ]
    assert session_file(home, session_id).read_bytes() == original


# --- attach, status, detach, routing errors -----------------------------------------------------------


async def test_attach_status_and_detach(daemon_factory, project, tmp_path):
    """attach answers {status, info}; agent.status names one agent or lists all; attach and status
    of an unknown agent are NOT_FOUND; detach answers a bare success and stops the stream.

    Covers: R10.1.18, R10.1.21, R10.1.26, R10.1.27, R6.4.7, R8.8
    """
    daemon = await daemon_factory([text_step("hello")], loop=True)
    client = await daemon.unix()
    other = tmp_path / "other"
    other.mkdir()
    a1 = await create_agent(client, project, name="one")
    a2 = await create_agent(client, other, name="two")
    resp, sync = await attach(client, a1)
    assert set(resp["data"]) == {"status", "info"}
    assert resp["data"]["status"] == "idle"
    info = resp["data"]["info"]
    assert info["agent_id"] == a1
    assert info["name"] == "one"
    assert info["cwd"] == str(project.resolve())
    assert info["runtime_state"] == "running"
    assert isinstance(info["created_at"], int | float)
    assert sync["status"] == "idle"

    one, _ = await client.request({"type": "agent.status", "id": "s1", "agent_id": a2})
    assert one["success"] is True
    assert [a["agent_id"] for a in one["data"]["agents"]] == [a2]
    assert one["data"]["agents"][0]["name"] == "two"
    every, _ = await client.request({"type": "agent.status", "id": "s2"})
    assert {a["agent_id"] for a in every["data"]["agents"]} == {a1, a2}

    await fails(client, {"type": "agent.attach", "id": "ghost", "agent_id": "agent-0000"}, "NOT_FOUND")
    await fails(client, {"type": "agent.status", "id": "ghost2", "agent_id": "agent-0000"}, "NOT_FOUND")

    detached, _ = await client.request({"type": "agent.detach", "id": "d", "agent_id": a1})
    assert detached == {"type": "response", "id": "d", "command": "agent.detach", "success": True}
    await fails(client, {"type": "prompt", "id": "p", "agent_id": a1, "message": "hi"}, "NOT_ATTACHED")


async def test_per_agent_command_routing_errors(daemon_factory, transport, home, project):
    """A per-agent command without agent_id, or naming an agent this connection is not attached to,
    is NOT_ATTACHED; naming no agent at all, NOT_FOUND. Nothing reaches the runtime and the
    connection stays usable after each.

    Covers: R8.9, R8.10, R8.8, R8.1
    """
    daemon = await daemon_factory([text_step("only after attach")])
    owner = await connect(daemon, transport)
    client = await connect(daemon, transport)
    agent = await create_agent(owner, project)
    await attach(owner, agent)
    for message in ({"type": "prompt", "message": "hi"}, {"type": "list_modes"}):
        await fails(client, {**message, "id": "none"}, "NOT_ATTACHED")
        await fails(client, {**message, "id": "other", "agent_id": agent}, "NOT_ATTACHED")
        await fails(client, {**message, "id": "ghost", "agent_id": "agent-0000"}, "NOT_FOUND")
        assert agent in await listed(client), "the connection is still usable"
    assert recorded_requests(home) == [], "no prompt reached the runtime"
    assert not any(m.get("type") == "turn_start" for m in owner.seen + client.seen)

    await attach(client, agent)
    modes, _ = await client.request({"type": "list_modes", "id": "lm", "agent_id": agent})
    assert modes["success"] is True, modes
    await client.send({"type": "prompt", "agent_id": agent, "message": "now"})
    await client.idle(agent_id=agent)


# --- terminate, kill, crash -----------------------------------------------------------------------


async def test_terminate_idle_agent_stops_at_once(daemon_factory, home, project):
    """agent.terminate of an idle agent answers deferred:false with the runtime already stopping:
    every connection sees runtime_state stopped, the process is gone, no agent_exited (it is no
    failure); the session JSONL and the agent stay, and attach restores it.

    Covers: R10.1.22, R10.1.23, R3.8, R6.4.11, R10.2.13, R10.2.20
    """
    daemon = await daemon_factory([text_step("remember this"), text_step("x")])
    client = await daemon.unix()
    bystander = await daemon.ws()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "keep me"})
    await client.idle(agent_id=agent)
    kept = session_file(home, sync["session_id"]).read_bytes()

    resp, before = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp == {
        "type": "response",
        "id": "t",
        "command": "agent.terminate",
        "success": True,
        "data": {"deferred": False},
    }
    changes = await until_runtime_state(bystander, agent, "stopped")
    for change in [m for m in changes if m["type"] == "agent_status_changed"]:
        assert set(change) <= AGENT_STATUS_CHANGED_KEYS
        assert change["runtime_state"] in ("starting", "running", "stopping", "stopped", "failed")
    await until_stopped(client, agent, before)
    assert runtime_pids(home) == []
    assert not any(m["type"] == "agent_exited" for m in client.seen + bystander.seen)
    assert session_file(home, sync["session_id"]).read_bytes() == kept
    info = (await listed(client))[agent]
    assert info["runtime_state"] == "stopped"
    _, again = await attach(bystander, agent)
    assert again["session_id"] == sync["session_id"]
    assert again["runtime_epoch"] == sync["runtime_epoch"] + 1
    assert [m["content"][0]["text"] for m in again["live_window"]["messages"]] == ["keep me", "remember this"]


async def test_terminate_during_a_turn_is_deferred(daemon_factory, home, project):
    """agent.terminate during a turn answers deferred:true; the runtime lives on until the turn
    ends (turn_end, status idle), and only then stops; the finished turn is in the session.

    Covers: R10.1.22, R10.1.24, R3.9, R6.4.11
    """
    slow = {
        "blocks": [
            {"type": "text", "text": "working "},
            {"type": "pause", "ms": 1500},
            {"type": "text", "text": "and finished after terminate"},
        ]
    }
    daemon = await daemon_factory([slow])
    client = await daemon.unix()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "work"})
    await client.until_type("message_delta")
    (pid,) = runtime_pids(home)
    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp["success"] is True
    assert resp["data"] == {"deferred": True}
    assert runtime_pids(home) == [pid], "the runtime keeps working"
    rest = await until_runtime_state(client, agent, "stopped")
    kinds = [
        (m["type"], m.get("runtime_state" if m["type"] == "agent_status_changed" else "status")) for m in rest
    ]
    end = kinds.index(("turn_end", None))
    idle = kinds.index(("status", "idle"))
    stopping = kinds.index(("agent_status_changed", "stopping"))
    assert end < stopping, kinds
    assert idle < stopping, kinds
    complete = next(
        m for m in rest if m["type"] == "message_complete" and m["message"]["role"] == "assistant"
    )
    assert complete["message"]["content"][0]["text"] == "working and finished after terminate"
    assert runtime_pids(home) == []
    assert b"and finished after terminate" in session_file(home, sync["session_id"]).read_bytes()


async def test_terminate_forgets_an_agent_whose_first_start_failed(daemon_factory, home, project):
    """agent.terminate of an agent whose runtime never became ready (config.toml broken after the
    daemon read it) answers {deferred: false, forgotten: true}: the agent leaves agent.list and
    state.db, every connection sees agent_status_changed {runtime_state: stopped, detail:
    "forgotten"}, and later commands for it are NOT_FOUND. agent.kill alone does not forget it.

    Covers: R10.1.22, R10.1.23, R10.2.13, R10.2.20
    """
    daemon = await daemon_factory([text_step("never said")])
    client = await daemon.unix()
    bystander = await daemon.ws()
    break_config(home)
    resp, seen = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    assert resp["error"]["code"] == "RUNTIME_START_FAILED", resp
    agent = next(m for m in seen if m["type"] == "agent_spawned")["agent_id"]
    killed, _ = await client.request({"type": "agent.kill", "id": "k", "agent_id": agent})
    assert killed["success"] is True
    assert (await listed(client))[agent]["runtime_state"] == "failed", "kill does not forget"

    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp == {
        "type": "response",
        "id": "t",
        "command": "agent.terminate",
        "success": True,
        "data": {"deferred": False, "forgotten": True},
    }
    gone = (
        await bystander.until(
            lambda m: m["type"] == "agent_status_changed" and m.get("detail") == "forgotten"
        )
    )[-1]
    assert gone["agent_id"] == agent
    assert gone["runtime_state"] == "stopped"
    assert set(gone) <= AGENT_STATUS_CHANGED_KEYS
    assert agent not in await listed(client)
    assert manifest_rows(home, agent_id=agent) == []
    await fails(client, {"type": "agent.status", "id": "s", "agent_id": agent}, "NOT_FOUND")
    await fails(client, {"type": "agent.attach", "id": "a", "agent_id": agent}, "NOT_FOUND")
    await fails(client, {"type": "agent.terminate", "id": "t2", "agent_id": agent}, "NOT_FOUND")


async def test_terminate_forgets_a_failed_adoption_and_keeps_the_session(daemon_factory, home, project):
    """An adopted session whose runtime cannot start (config.toml broken): agent.terminate forgets
    the agent but not the session — its bytes are untouched and, once the cause is fixed, it can be
    adopted again by a new agent.

    Covers: R10.1.22, R10.1.12, R6.4.11
    """
    write_scripted_home(home, [text_step("legacy answer"), text_step("x")], extensions=TEST_TOOLS)
    session_id = await legacy_session(home, project, "keep this conversation")
    original = session_file(home, session_id).read_bytes()
    config = home / "config.toml"
    good = config.read_text()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    config.write_text("default_model = [this is not toml\n")
    adopt = {"type": "agent.create", "id": "adopt", "cwd": str(project), "session_id": session_id}
    resp, _ = await client.request(adopt)
    agent = resp["error"]["data"]["agent_id"]

    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp["data"] == {"deferred": False, "forgotten": True}
    assert manifest_rows(home, session_id=session_id) == []
    assert session_file(home, session_id).read_bytes() == original

    config.write_text(good)
    resp, _ = await client.request(adopt)
    assert resp["success"] is True, resp
    assert resp["data"]["agent_id"] != agent
    _, sync = await attach(client, resp["data"]["agent_id"])
    assert sync["live_window"]["messages"][0]["content"][0]["text"] == "keep this conversation"


async def test_terminate_forgets_a_crashed_agent_not_a_stopped_one(daemon_factory, home, project, tmp_path):
    """A runtime that crashed (runtime_state failed, nothing running) is forgotten by
    agent.terminate, its session kept; an agent whose runtime once started and is merely stopped —
    even after a daemon restart, when no runtime of it has started in this daemon — is not: its
    terminate is the plain {deferred: false} and it stays listed.

    Covers: R10.1.22, R10.1.23, R6.4.11
    """
    other = tmp_path / "other"
    other.mkdir()
    daemon = await daemon_factory([text_step("x")], loop=True)
    client = await daemon.unix()
    crashed = await create_agent(client, project)
    _, sync = await attach(client, crashed)
    await client.send({"type": "prompt", "agent_id": crashed, "message": "remember me"})
    await client.idle(agent_id=crashed)
    kept = session_file(home, sync["session_id"]).read_bytes()
    stopped = await create_agent(client, other)
    pids = runtime_pids(home)
    assert len(pids) == 2
    crashed_pid = next(p for p in pids if str(project).encode() in Path(f"/proc/{p}/cmdline").read_bytes())
    os.kill(crashed_pid, signal.SIGKILL)
    await until_runtime_state(client, crashed, "failed")

    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": crashed})
    assert resp["data"] == {"deferred": False, "forgotten": True}
    assert crashed not in await listed(client)
    assert session_file(home, sync["session_id"]).read_bytes() == kept

    await daemon.stop()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    assert (await listed(client))[stopped]["runtime_state"] == "stopped"
    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": stopped})
    assert resp["data"] == {"deferred": False}
    assert stopped in await listed(client)


async def test_a_failed_first_start_is_forgotten_after_a_daemon_restart(daemon_factory, home, project):
    """Whether an agent ever started is durable: after a daemon restart an agent whose only start
    failed is listed as stopped, and agent.terminate still forgets it.

    Covers: R10.1.22, R10.1.23
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    good = break_config(home)
    resp, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    agent = resp["error"]["data"]["agent_id"]
    (home / "config.toml").write_bytes(good)  # or the next daemon would refuse to start
    await daemon.stop()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    assert (await listed(client))[agent]["runtime_state"] == "stopped"
    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp["data"] == {"deferred": False, "forgotten": True}
    assert agent not in await listed(client)


async def test_kill_stops_the_runtime_and_keeps_the_agent(daemon_factory, home, project, tmp_path):
    """agent.kill (plain, mid-turn; force, idle) answers a bare success with the runtime gone; the
    agent stays listed (runtime stopped, not failed) with its session, and attach restores it under a
    new runtime_epoch.

    Covers: R10.1.25, R6.4.12, R6.4.10, R6.4.16
    """
    daemon = await daemon_factory([tool_step("sleep", {"seconds": 60}), text_step("after")])
    client = await daemon.unix()
    other = tmp_path / "other"
    other.mkdir()
    busy = await create_agent(client, project, name="busy")
    idle = await create_agent(client, other, name="idle")
    _, busy_sync = await attach(client, busy)
    _, idle_sync = await attach(client, idle)
    await client.send({"type": "prompt", "agent_id": busy, "message": "long wait"})
    await client.until(lambda m: m["type"] == "tool_call" and m.get("agent_id") == busy)
    assert len(runtime_pids(home)) == 2
    sessions = {busy: busy_sync["session_id"], idle: idle_sync["session_id"]}

    for agent, force in ((busy, False), (idle, True)):
        resp, before = await client.request(
            {"type": "agent.kill", "id": f"k-{agent}", "agent_id": agent, "force": force}
        )
        assert resp == {"type": "response", "id": f"k-{agent}", "command": "agent.kill", "success": True}
        await until_stopped(client, agent, before)
    assert runtime_pids(home) == []
    assert session_file(home, sessions[busy]).exists(), "the busy agent's session is kept"
    agents = await listed(client)
    for agent in (busy, idle):
        assert agents[agent]["runtime_state"] == "stopped"
        assert agents[agent]["status"] in ("idle", "error"), "not left in an active status"

    watcher = await daemon.ws()
    _, restored = await attach(watcher, busy)
    assert restored["session_id"] == sessions[busy]
    assert restored["runtime_epoch"] == busy_sync["runtime_epoch"] + 1
    assert restored["live_window"]["messages"][0]["content"][0]["text"] == "long wait"
    _, restored_idle = await attach(watcher, idle)
    assert restored_idle["session_id"] == sessions[idle]


async def test_idle_runtime_crash_is_reported_to_every_connection(daemon_factory, home, project):
    """A runtime that dies while idle is reported to connections that never attached:
    agent_exited {agent_id, runtime_state failed, reason, exit_code} and agent_status_changed with
    runtime_state failed, agent_id as payload; the agent is restorable.

    Covers: R10.2.12, R10.2.13, R10.2.20, R6.4.10, R6.4.16
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    bystander = await daemon.ws()
    agent = await create_agent(client, project)
    (pid,) = runtime_pids(home)
    os.kill(pid, signal.SIGKILL)
    exited = (await bystander.until_type("agent_exited"))[-1]
    assert set(exited) <= AGENT_EXITED_KEYS
    assert exited["agent_id"] == agent
    assert exited["runtime_state"] == "failed"
    assert isinstance(exited["reason"], str)
    assert exited["reason"]
    assert exited["exit_code"] == -9
    changed = (await until_runtime_state(bystander, agent, "failed"))[-1]
    assert set(changed) <= AGENT_STATUS_CHANGED_KEYS
    _, sync = await attach(client, agent)
    assert sync["runtime_epoch"] == 1
    assert (await listed(client))[agent]["runtime_state"] == "running"


# --- daemon shutdown ------------------------------------------------------------------------------


async def test_graceful_shutdown_lets_the_turn_finish(daemon_factory, home, project):
    """daemon.shutdown (graceful by default) answers success, lets the running turn finish — its
    answer reaches the client and the session — then stops the runtime and exits 0.

    Covers: R10.1.28, R10.1.29
    """
    slow = {
        "blocks": [
            {"type": "text", "text": "started "},
            {"type": "pause", "ms": 1500},
            {"type": "text", "text": "and finished during shutdown"},
        ]
    }
    daemon = await daemon_factory([slow])
    client = await daemon.unix()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "go"})
    await client.until_type("message_delta")
    resp, _ = await client.request({"type": "daemon.shutdown", "id": "bye"})
    assert resp == {"type": "response", "id": "bye", "command": "daemon.shutdown", "success": True}
    code = await asyncio.wait_for(daemon.proc.wait(), 30)
    assert code == 0
    assert runtime_pids(home) == []
    text = session_file(home, sync["session_id"]).read_bytes()
    assert b"started and finished during shutdown" in text
    rest = await drain(client)
    ends = [m for m in rest if m["type"] == "turn_end"]
    assert len(ends) == 1, "the turn ended before the daemon closed the connection"


async def test_forced_shutdown_kills_runtimes_at_once(daemon_factory, home, project):
    """daemon.shutdown force:true does not wait for a running turn (a 60 s tool call): the runtimes
    are killed, the daemon exits, the turn never finishes.

    Covers: R10.1.28, R10.1.30
    """
    daemon = await daemon_factory([tool_step("sleep", {"seconds": 60}), text_step("never said")])
    client = await daemon.unix()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "wait a minute"})
    await client.until_type("tool_call")
    assert len(runtime_pids(home)) == 1
    resp, _ = await client.request({"type": "daemon.shutdown", "id": "now", "force": True})
    assert resp == {"type": "response", "id": "now", "command": "daemon.shutdown", "success": True}
    code = await asyncio.wait_for(daemon.proc.wait(), 15)
    assert code == 0
    assert runtime_pids(home) == []
    assert b"never said" not in session_file(home, sync["session_id"]).read_bytes()
    assert not any(m["type"] == "turn_end" for m in client.seen + await drain(client))


# --- idle reaping ---------------------------------------------------------------------------------


async def test_idle_runtime_is_reaped_and_restored(daemon_factory, home, project):
    """With --idle-runtime-timeout 1 an idle runtime is stopped no sooner than that period after
    it went idle (runtime_state stopped to everyone, the process gone); the next prompt restores it
    with runtime_epoch + 1 and a fresh sync holding the history.

    Covers: R6.4.13, R6.4.15, R10.2.13, R10.2.20
    """
    daemon = await daemon_factory([text_step("first"), text_step("second")], "--idle-runtime-timeout", "1")
    client = await daemon.unix()
    bystander = await daemon.ws()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "one"})
    await client.idle(agent_id=agent)
    loop = asyncio.get_running_loop()
    went_idle = loop.time()
    await until_runtime_state(client, agent, "stopped", within=15)
    assert loop.time() - went_idle >= 0.9, "reaped before the idle period passed"
    change = (await until_runtime_state(bystander, agent, "stopped"))[-1]
    assert set(change) <= AGENT_STATUS_CHANGED_KEYS
    assert change["status"] == "idle"
    assert runtime_pids(home) == []
    assert not any(m["type"] == "agent_exited" for m in client.seen)

    reaped_epoch = max(m["runtime_epoch"] for m in client.seen if m["type"] == "sync")
    await client.send({"type": "prompt", "agent_id": agent, "message": "two"})
    fresh = (await client.until(lambda m: m["type"] == "sync" and m.get("agent_id") == agent))[-1]
    assert fresh["runtime_epoch"] == reaped_epoch + 1
    assert fresh["session_id"] == sync["session_id"]
    assert [m["content"][0]["text"] for m in fresh["live_window"]["messages"]][:2] == ["one", "first"]
    done = await client.idle(agent_id=agent)
    assert any(
        m["type"] == "message_complete" and m["message"]["content"][0].get("text") == "second" for m in done
    )


async def test_active_agent_is_never_reaped(daemon_factory, home, project):
    """With --idle-runtime-timeout 0.5 an agent running a 1.2 s tool (streaming) and then waiting
    1.5 s for a permission answer nobody gives keeps its runtime; once answered and idle it is
    reaped. End to end; test_broker_core.py pins the rule with a fake clock.

    Covers: R6.4.14, R6.4.13
    """
    steps = [tool_step("sleep", {"seconds": 1.2}), TOUCH, text_step("made it")]
    daemon = await daemon_factory(steps, "--idle-runtime-timeout", "0.5")
    client = await daemon.unix()
    agent = await create_agent(client, project)
    await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "sleep then write"})
    await client.until(lambda m: m["type"] == "tool_call" and m.get("agent_id") == agent)
    active_from = len(client.seen)  # before the turn (on a loaded machine) an idle reap is allowed
    (pid,) = runtime_pids(home)
    request = (await client.until_type("permission_request"))[-1]
    assert runtime_pids(home) == [pid], "reaped while streaming"
    await asyncio.sleep(1.5)  # three idle periods pass while the request waits
    assert runtime_pids(home) == [pid], "reaped while waiting for permission"
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": agent})
    info = status["data"]["agents"][0]
    assert (info["status"], info["runtime_state"]) == ("waiting_for_permission", "running")
    assert not {"stopping", "stopped"} & set(state_changes(client.seen[active_from:], agent))

    await client.send(
        {
            "type": "permission_response",
            "agent_id": agent,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    await client.idle(agent_id=agent)
    assert (project / "made.txt").exists()
    await until_runtime_state(client, agent, "stopped", within=15)
    assert runtime_pids(home) == []


async def test_a_session_open_elsewhere_is_not_adopted_until_it_is_free(daemon_factory, home, project):
    """Adopting a session a direct `shard agent` still has open fails with RUNTIME_START_FAILED
    (its message says why) and writes nothing to the session; the binding is kept, and once the
    other process has exited an attach starts it.

    Covers: R10.1.16, R6.4.9, R8.14
    """
    daemon = await daemon_factory([text_step("direct"), text_step("adopted")])
    direct = await AgentProcess.start(home, project)
    _, sync = await direct.handshake()
    session_id = sync["session_id"]
    await direct.send({"type": "prompt", "message": "first"})
    await direct.idle()
    session_file = home / "sessions" / session_id / "session.jsonl"
    before = session_file.read_bytes()
    client = await daemon.unix()
    resp, _ = await client.request(
        {"type": "agent.create", "id": "c", "cwd": str(project), "session_id": session_id}
    )
    assert resp["error"]["code"] == "RUNTIME_START_FAILED"
    assert "open in another shard process" in resp["error"]["message"]
    agent = resp["error"]["data"]["agent_id"]
    assert session_file.read_bytes() == before
    assert await direct.finish() == 0
    _, sync2 = await attach(client, agent)
    assert sync2["session_id"] == session_id
    await client.send({"type": "prompt", "agent_id": agent, "message": "second"})
    await client.idle(agent_id=agent)


async def _run_daemon_expecting_failure(home: Path, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *shard_command("daemon", "--home", str(home), *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "SHARD_HOME": str(home)},
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode if proc.returncode is not None else -1, err.decode()


async def test_a_second_daemon_refuses_to_start_and_harms_nothing(daemon_factory, home, tmp_path, project):
    """A second daemon on the same SHARD_HOME, or on a port already in use, exits 1 with one clear
    line (no traceback) and leaves the first daemon's socket, daemon.json and agents alone.

    Covers: R4.2.2, R10.1.2
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    agent = await create_agent(client, project)
    info = (home / "daemon.json").read_text()

    code, err = await _run_daemon_expecting_failure(home, "--port", "0")
    assert code == 1
    assert "already serving this SHARD_HOME" in err
    assert "Traceback" not in err

    other = tmp_path / "other-home"
    code, err = await _run_daemon_expecting_failure(other, "--port", str(daemon.port))
    assert code == 1
    assert f"cannot listen on 127.0.0.1:{daemon.port}" in err
    assert "Traceback" not in err
    assert not (other / "daemon.sock").exists(), "the failed daemon left its socket behind"

    assert (home / "daemon.json").read_text() == info
    assert (home / "daemon.sock").exists()
    listing, _ = await client.request({"type": "agent.list", "id": "l"})
    assert [a["agent_id"] for a in listing["data"]["agents"]] == [agent]
    again = await daemon.unix()
    assert again.seen[0]["type"] == "hello"


async def test_create_needs_an_existing_absolute_cwd(daemon_factory, project, tmp_path):
    """A relative cwd (it would mean the daemon's directory, not the client's) and a cwd that is not
    a directory are INVALID_REQUEST and create nothing; `~` is the user's home.

    Covers: R10.1.3, R8.5
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    (tmp_path / "plain.txt").write_text("x")
    for cwd in (".", "project", str(tmp_path / "missing"), str(tmp_path / "plain.txt")):
        refused, _ = await client.request({"type": "agent.create", "id": "c", "cwd": cwd})
        assert refused["success"] is False, cwd
        assert refused["error"]["code"] == "INVALID_REQUEST"
    listing, _ = await client.request({"type": "agent.list", "id": "l"})
    assert listing["data"]["agents"] == []
    made, _ = await client.request({"type": "agent.create", "id": "h", "cwd": "~"})
    assert made["success"] is True
    status, _ = await client.request(
        {"type": "agent.status", "id": "s", "agent_id": made["data"]["agent_id"]}
    )
    assert status["data"]["agents"][0]["cwd"] == os.path.realpath(os.path.expanduser("~"))

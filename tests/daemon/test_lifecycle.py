"""Agent lifecycle on a real ``shard daemon`` (PROTOCOL §3, §6.4, §8, §10.1, §10.2; DESIGN §2):
managed create and its manifest fields, legacy adoption, attach/status/detach and per-agent routing
errors (terminate, kill, shutdown and reaping are in test_lifecycle_stop.py: two modules, so that
two workers share them). Real processes, files and SQLite."""

from __future__ import annotations

from daemon_helpers import allow, attach, connect, create_agent, runtime_pids
from lifecycle_helpers import (
    TOUCH,
    TWO_MODELS,
    break_config,
    fails,
    legacy_session,
    listed,
    manifest_rows,
    session_file,
)

from shard.testing import recorded_requests, text_step, tool_step, write_scripted_home
from shard.testing.tools import TEST_TOOLS

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
    await allow(answerer, queuer, pending["request_id"])
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

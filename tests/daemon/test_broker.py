"""The broker against a real ``shard daemon``: who receives what (attachments, the global overview),
who may answer requests (interactive clients, delegation to ancestors, the headless path), and
attach ordering while an agent streams."""

from __future__ import annotations

import asyncio

from daemon_helpers import attach, connect, create_agent, runtime_pids

from shard.testing import text_step, tool_step

ACTIVITY_KEYS = {"type", "agent_id", "timestamp", "phase", "status", "tool_name"}
PHASES = {"idle", "thinking", "streaming", "tool", "waiting", "compacting", "retrying", "error"}
PER_AGENT_EVENTS = {
    "sync",
    "status",
    "turn_start",
    "message_delta",
    "message_complete",
    "tool_call",
    "tool_result",
    "usage",
    "turn_end",
    "permission_request",
    "permission_resolved",
    "ui_request",
    "ui_resolved",
}


async def test_unattached_clients_get_only_the_sanitized_overview(daemon_factory, transport, project):
    """A client that never attached sees agent_activity and status changes for the agent at work,
    never its per-agent events; the overview carries no prompt, text, args, results or paths; it
    stays unattached (a per-agent command is NOT_ATTACHED).

    Covers: R6.1.1, R6.1.3, R10.2.14, R10.2.15, R10.2.16, R10.2.17, R10.2.20, R5.2.4, R10.2.13
    """
    steps = [
        tool_step("touch", {"path": "secret-file-name.txt"}, text="confidential model words"),
        text_step("more confidential words"),
    ]
    daemon = await daemon_factory(steps)
    driver = await connect(daemon, transport)
    overview = await connect(daemon, transport)
    agent = await create_agent(driver, project)
    await attach(driver, agent)
    await driver.send({"type": "prompt", "agent_id": agent, "message": "a private prompt"})
    request = (await driver.until_type("permission_request"))[-1]
    await driver.send(
        {
            "type": "permission_response",
            "agent_id": agent,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    await driver.idle(agent_id=agent)
    await overview.until(
        lambda m: m["type"] == "agent_activity" and m["agent_id"] == agent and m["phase"] == "idle"
    )
    seen = overview.seen
    assert not [m for m in seen if m["type"] in PER_AGENT_EVENTS], (
        "per-agent events reached a non-attached client"
    )
    activity = [m for m in seen if m["type"] == "agent_activity"]
    phases = [m["phase"] for m in activity]
    assert {"streaming", "tool", "waiting", "idle"} <= set(phases), phases
    for event in activity:
        assert set(event) <= ACTIVITY_KEYS, event
        assert event["phase"] in PHASES
        assert isinstance(event["timestamp"], float | int)
        assert event["agent_id"] == agent
    assert any(m.get("tool_name") == "touch" for m in activity)
    text = str(seen)
    assert "confidential" not in text
    assert "private prompt" not in text
    assert "secret-file-name" not in text
    assert not any(str(project) in str(m) for m in activity), "a path leaked into agent_activity"
    changes = [m for m in seen if m["type"] == "agent_status_changed" and m["agent_id"] == agent]
    assert {"streaming", "waiting_for_permission", "idle"} <= {m["status"] for m in changes}
    for change in changes:
        assert set(change) <= {"type", "agent_id", "status", "runtime_state", "detail"}
    refused, _ = await overview.request({"type": "list_modes", "id": "m", "agent_id": agent})
    assert refused["error"]["code"] == "NOT_ATTACHED"


async def test_no_interactive_responder_means_the_headless_answer(daemon_factory, transport, project):
    """With only an observer attached (and an unattached client watching the overview), a permission
    request gets the headless deny and a UI request the headless null, at once.

    Covers: R6.3.12, R6.3.13, R6.3.14, R6.3.15, R10.2.19
    """
    steps = [
        tool_step("touch", {"path": "made.txt"}),
        tool_step("ask", {"kind": "input", "title": "name?"}),
        text_step("gave up"),
    ]
    daemon = await daemon_factory(steps)
    admin = await connect(daemon, transport)
    await connect(daemon, transport)  # receives agent_activity: not a responder
    agent = await create_agent(admin, project, headless_policy="deny")
    await attach(admin, agent, role="observer")
    await admin.send({"type": "prompt", "agent_id": agent, "message": "do it"})
    await admin.idle(agent_id=agent)
    permission = next(m for m in admin.seen if m["type"] == "permission_resolved")
    assert permission["decision"] == "deny"
    assert permission["source"] == "headless"
    ui = next(m for m in admin.seen if m["type"] == "ui_resolved")
    assert ui["value"] is None
    assert ui["source"] == "headless"
    assert not (project / "made.txt").exists()


async def test_ui_request_broadcast_first_answer_wins(daemon_factory, project):
    """A ui_request reaches both interactive clients; the first answer wins, the second is dropped
    silently, both see ui_resolved with the winning value.

    Covers: R6.3.2, R6.3.4, R6.3.5, R6.3.7
    """
    steps = [
        tool_step("ask", {"kind": "select", "title": "pick", "options": ["red", "blue"]}),
        text_step("ok"),
    ]
    daemon = await daemon_factory(steps)
    c1, c2 = await daemon.unix(), await daemon.ws()
    agent = await create_agent(c1, project)
    await attach(c1, agent)
    await attach(c2, agent)
    await c1.send({"type": "prompt", "agent_id": agent, "message": "ask me"})
    r1 = (await c1.until_type("ui_request"))[-1]
    r2 = (await c2.until_type("ui_request"))[-1]
    assert r1 == r2
    asked = {c1: len(c1.seen), c2: len(c2.seen)}
    first, _ = await c1.request(
        {"type": "ui_response", "id": "1", "agent_id": agent, "request_id": r1["request_id"], "value": "blue"}
    )
    second, _ = await c2.request(
        {"type": "ui_response", "id": "2", "agent_id": agent, "request_id": r1["request_id"], "value": "red"}
    )
    assert first["success"] is True
    assert second["success"] is True
    for client in (c1, c2):
        # The turn may end before the late answer's response: then ``request`` has read the idle.
        if not any(m["type"] == "status" and m["status"] == "idle" for m in client.seen[asked[client] :]):
            await client.idle(agent_id=agent)
        resolved = [m for m in client.seen if m["type"] == "ui_resolved"]
        assert [m["value"] for m in resolved] == ["blue"]
    result = next(m for m in c1.seen if m["type"] == "tool_result")
    assert "blue" in str(result)
    assert "red" not in str(result)


async def test_a_second_answer_is_never_forwarded_to_the_runtime(daemon_factory, project):
    """Two interactive clients answer the same permission and UI requests back to back: only the
    first answer of each reaches the runtime (a runtime that gets a second one says so on stderr,
    which the daemon passes on — checked after round trips through the same runtime).

    Covers: R6.3.3, R6.3.5
    """
    steps = [
        tool_step("touch", {"path": "made.txt"}),
        tool_step("ask", {"kind": "input", "title": "name?"}),
        text_step("ok"),
    ]
    daemon = await daemon_factory(steps)
    c1, c2 = await daemon.unix(), await daemon.unix()
    agent = await create_agent(c1, project)
    await attach(c1, agent)
    await attach(c2, agent)
    await c1.send({"type": "prompt", "agent_id": agent, "message": "go"})
    for kind, answer in (("permission_request", {"choice_id": "allow"}), ("ui_request", {"value": "x"})):
        request = (await c1.until_type(kind))[-1]
        reply = kind.replace("request", "response")
        message = {"type": reply, "agent_id": agent, "request_id": request["request_id"], **answer}
        await c1.send({**message, "id": "first"})
        await c2.send({**message, "id": "second"})
        for client, cid in ((c1, "first"), (c2, "second")):
            done = await client.until(lambda m, cid=cid: m["type"] == "response" and m.get("id") == cid)
            assert done[-1]["success"] is True
    await c1.idle(agent_id=agent)
    for n in range(2):  # the runtime has read everything sent before these
        modes, _ = await c1.request({"type": "list_modes", "id": f"m{n}", "agent_id": agent})
        assert modes["success"] is True
    assert not [line for line in daemon.output if "dropped a second answer" in line]
    assert (project / "made.txt").exists()


async def test_child_requests_go_to_the_nearest_interactive_ancestor(daemon_factory, project):
    """A child with no interactive client of its own has its permission request shown to its
    parent's client with the child's agent_id; the parent's client drops, reconnects, re-attaches
    the parent and is shown the request again; its answer resolves the child's request.

    End to end over both transports; test_broker_core.py pins the rule in process.

    Covers: R6.3.8, R6.3.9, R6.3.10, R6.3.11, R6.4.23, R6.4.24, R10.1.8
    """
    steps = [tool_step("touch", {"path": "child.txt"}), text_step("child done")]
    daemon = await daemon_factory(steps)
    boss = await daemon.unix()
    parent = await create_agent(boss, project, name="parent")
    await attach(boss, parent)
    child = await create_agent(boss, project, name="child", parent_agent_id=parent)
    listed, _ = await boss.request({"type": "agent.status", "id": "s", "agent_id": child})
    assert listed["data"]["agents"][0]["parent_agent_id"] == parent
    watcher = await daemon.ws()
    await attach(watcher, child, role="observer")
    await watcher.send({"type": "prompt", "agent_id": child, "message": "touch it"})
    routed = (await boss.until_type("permission_request"))[-1]
    assert routed["agent_id"] == child
    await boss.close()
    await asyncio.sleep(0.5)  # the request outlives its only responder's connection
    status, _ = await watcher.request({"type": "agent.status", "id": "s2", "agent_id": child})
    assert status["data"]["agents"][0]["status"] == "waiting_for_permission"
    boss2 = await daemon.ws()
    await attach(boss2, parent)
    again = (await boss2.until_type("permission_request"))[-1]
    assert again["request_id"] == routed["request_id"]
    assert again["agent_id"] == child
    answer, _ = await boss2.request(
        {
            "type": "permission_response",
            "id": "a",
            "agent_id": child,
            "request_id": routed["request_id"],
            "decision": "allow",
        }
    )
    assert answer["success"] is True
    resolved = (await boss2.until_type("permission_resolved"))[-1]
    assert resolved["agent_id"] == child
    assert resolved["decision"] == "allow"
    await watcher.idle(agent_id=child)
    assert (project / "child.txt").exists()


async def test_own_interactive_client_answers_before_any_ancestor(daemon_factory, project):
    """A child with an interactive client of its own keeps its requests: the parent's client is not
    shown them and cannot answer them.

    Covers: R6.3.8, R8.10
    """
    steps = [tool_step("touch", {"path": "own.txt"}), text_step("done")]
    daemon = await daemon_factory(steps)
    boss, own = await daemon.unix(), await daemon.ws()
    parent = await create_agent(boss, project)
    await attach(boss, parent)
    child = await create_agent(boss, project, parent_agent_id=parent)
    await attach(own, child)
    await own.send({"type": "prompt", "agent_id": child, "message": "go"})
    request = (await own.until_type("permission_request"))[-1]
    refused, _ = await boss.request(
        {
            "type": "permission_response",
            "id": "x",
            "agent_id": child,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    assert refused["error"]["code"] == "NOT_ATTACHED"
    await own.send(
        {
            "type": "permission_response",
            "agent_id": child,
            "request_id": request["request_id"],
            "decision": "deny",
        }
    )
    await own.idle(agent_id=child)
    assert not [m for m in boss.seen if m["type"] == "permission_request"]
    assert not (project / "own.txt").exists()


async def test_attaching_while_streaming_misses_and_repeats_nothing(daemon_factory, project):
    """Clients attaching in the middle of a stream get sync first, then a contiguous tail of the live
    deltas: no delta before the sync, none lost after it, none twice; every attacher is then part
    of the fan-out until the end. The proof of "none lost": the message so far in the sync
    (``sync.streaming``) plus the deltas after it rebuild the final message exactly.

    End to end over both transports; test_broker_core.py pins the rule in process.

    Covers: R6.4.3, R6.4.4, R6.4.5, R6.4.6, R6.4.19, R6.4.20, R6.2.1, R6.2.2, R3.6
    """
    text = "".join(f"{i:04d}|" for i in range(600))
    steps = [{"blocks": [{"type": "text", "text": text}], "chunk": 5, "delay_ms": 4}, text_step("b")]
    daemon = await daemon_factory(steps)
    driver = await daemon.unix()
    agent = await create_agent(driver, project)
    await attach(driver, agent)
    await driver.send({"type": "prompt", "agent_id": agent, "message": "count"})
    await driver.until_type("message_delta")
    watchers = [await (daemon.ws() if n % 2 else daemon.unix()) for n in range(4)]
    syncs = await asyncio.gather(*(attach(w, agent) for w in watchers))
    for _, sync in syncs:
        assert sync["status"] == "streaming"
        assert sync["mode"] == "build"
    await driver.idle(agent_id=agent)
    full = [m["text_delta"] for m in driver.seen if m["type"] == "message_delta"]
    assert "".join(full) == text
    for watcher in watchers:
        await watcher.idle(agent_id=agent)
        mine = [m for m in watcher.seen if m.get("agent_id") == agent and m["type"] != "agent_activity"]
        first_sync = next(i for i, m in enumerate(mine) if m["type"] == "sync")
        assert not [m for m in mine[:first_sync] if m["type"] == "message_delta"]
        tail = [m["text_delta"] for m in mine if m["type"] == "message_delta"]
        assert tail, "the attacher got no live deltas"
        assert tail == full[len(full) - len(tail) :], "the deltas after sync are not the stream's exact tail"
        assert [m["type"] for m in mine].count("turn_end") == 1
        complete = [
            m for m in mine if m["type"] == "message_complete" and m["message"]["role"] == "assistant"
        ]
        assert complete[-1]["message"]["content"][0]["text"] == text
        assert _rebuilt(mine[first_sync], mine[first_sync + 1 :], complete[-1]["message_id"]) == text


def _rebuilt(sync: dict, after: list[dict], message_id: str) -> str:
    """The text of ``message_id`` as a client attaching with ``sync`` shows it: the snapshot's
    blocks (or the finished message in the window), then every later delta applied in place."""
    done = [m for m in sync["live_window"]["messages"] if m["id"] == message_id]
    if done:
        return done[0]["content"][0]["text"]
    streaming = sync.get("streaming")
    blocks = (
        [b.get("text") or "" for b in streaming["blocks"]]
        if streaming and streaming["message_id"] == message_id
        else []
    )
    for delta in after:
        if delta["type"] == "message_delta" and delta["message_id"] == message_id and "text_delta" in delta:
            index = delta["block_index"]
            while len(blocks) <= index:
                blocks.append("")
            blocks[index] += delta["text_delta"]
    return blocks[0] if blocks else ""


async def test_activity_never_wakes_a_stopped_agent(daemon_factory, project, tmp_path):
    """While one agent works and the overview flows to everyone, a stopped agent stays stopped.

    Covers: R10.2.18, R6.1.3
    """
    daemon = await daemon_factory([text_step("busy bee")], loop=True)
    client = await daemon.unix()
    other = tmp_path / "other"
    other.mkdir()
    sleeper = await create_agent(client, other)
    worker = await create_agent(client, project)
    stopped, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": sleeper})
    assert stopped["data"]["deferred"] is False
    await attach(client, worker)
    await client.send({"type": "prompt", "agent_id": worker, "message": "work"})
    await client.idle(agent_id=worker)
    assert any(m["type"] == "agent_activity" and m["agent_id"] == worker for m in client.seen)
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": sleeper})
    assert status["data"]["agents"][0]["runtime_state"] == "stopped"
    assert len(runtime_pids(daemon.home)) == 1
    assert not [m for m in client.seen if m.get("agent_id") == sleeper and m["type"] in PER_AGENT_EVENTS]


async def test_per_agent_commands_are_routed_by_agent_id(daemon_factory, transport, project, tmp_path):
    """On one connection, per-agent commands go to the agent their agent_id names; responses carry
    the client's own id back; orchestrator commands are answered by the daemon.

    Covers: R5.2.1, R5.2.3, R5.2.2
    """
    daemon = await daemon_factory([text_step("x")])
    client = await connect(daemon, transport)
    other = tmp_path / "other"
    other.mkdir()
    a = await create_agent(client, project, mode="plan")
    b = await create_agent(client, other)
    await attach(client, a)
    await attach(client, b)
    ra, _ = await client.request({"type": "set_mode", "id": "same", "agent_id": b, "mode": "plan"})
    assert ra["success"] is True
    assert ra["agent_id"] == b
    changed = [m for m in client.seen if m["type"] == "mode_changed"]
    assert [m["agent_id"] for m in changed] == [b]
    modes_a, _ = await client.request({"type": "list_modes", "id": "same", "agent_id": a})
    assert modes_a["agent_id"] == a
    assert modes_a["data"]["active"] == "plan"
    missing, _ = await client.request({"type": "list_modes", "id": "n"})
    assert missing["error"]["code"] == "NOT_ATTACHED"
    listing, _ = await client.request({"type": "agent.list", "id": "l"})
    assert "agent_id" not in listing


async def test_commands_pipelined_after_attach_wait_for_it(daemon_factory, transport, project):
    """A client may send agent.attach and its first prompt back to back: the attach completes
    (response, sync) before the prompt is handled, so the prompt is accepted, not NOT_ATTACHED.

    Covers: R6.4.6, R6.4.4, R10.1.18
    """
    daemon = await daemon_factory([text_step("pipelined answer")])
    admin = await connect(daemon, transport)
    agent = await create_agent(admin, project)
    client = await connect(daemon, transport)
    await client.send({"type": "agent.attach", "id": "a", "agent_id": agent})
    await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "hi"})
    await client.idle(agent_id=agent)
    mine = [m for m in client.seen if m["type"] in ("response", "sync", "turn_end")]
    assert [m["type"] for m in mine] == ["response", "sync", "response", "turn_end"]
    assert mine[0]["id"] == "a"
    assert mine[0]["success"] is True
    assert mine[2]["id"] == "p"
    assert mine[2]["success"] is True

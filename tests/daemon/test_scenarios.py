"""PROTOCOL §12's daemon scenarios against a real ``shard daemon``, over both transports."""

from __future__ import annotations

import asyncio
import os
import signal

import orjson
from daemon_helpers import attach, connect, create_agent, masked_text_frame, raw_websocket, runtime_pids

from shard.testing import text_step, tool_step

SLOW_WRITE = {
    "blocks": [
        {"type": "pause", "ms": 200},
        {"type": "tool_call", "name": "touch", "args": {"path": "made.txt"}},
    ]
}


async def test_permission_broadcast_first_response_wins(daemon_factory, transport, project):
    """§12.2: two clients see the same request; the second client answers first and wins; the
    other's later answer is dropped; both see permission_resolved.

    Covers: R12.2.1, R12.2.2, R12.2.3, R6.3.1, R6.3.3, R6.3.5, R6.3.6, R6.2.2, R5.2.2
    """
    daemon = await daemon_factory([SLOW_WRITE, text_step("done")])
    c1 = await connect(daemon, transport)
    c2 = await connect(daemon, "websocket")
    agent = await create_agent(c1, project)
    await attach(c1, agent)
    await attach(c2, agent)
    await c1.send({"type": "prompt", "agent_id": agent, "message": "make it"})
    r1 = (await c1.until_type("permission_request"))[-1]
    r2 = (await c2.until_type("permission_request"))[-1]
    asked = {c1: len(c1.seen), c2: len(c2.seen)}
    assert r1 == r2
    assert r1["agent_id"] == agent
    win, _ = await c2.request(
        {
            "type": "permission_response",
            "id": "w",
            "agent_id": agent,
            "request_id": r1["request_id"],
            "decision": "allow_always",
        }
    )
    late, _ = await c1.request(
        {
            "type": "permission_response",
            "id": "l",
            "agent_id": agent,
            "request_id": r1["request_id"],
            "decision": "deny",
        }
    )
    assert win["success"] is True
    assert late["success"] is True  # acknowledged, silently dropped
    for client in (c1, c2):
        # The turn may end before the late answer's response: then ``request`` has read the idle.
        if not any(m["type"] == "status" and m["status"] == "idle" for m in client.seen[asked[client] :]):
            await client.idle(agent_id=agent)
        resolved = [m for m in client.seen if m["type"] == "permission_resolved"]
        assert len(resolved) == 1, "resolved once, to everyone"
        assert resolved[0]["decision"] == "allow_always"
        assert resolved[0]["request_id"] == r1["request_id"]
    assert (project / "made.txt").exists()


async def test_attach_to_a_streaming_agent_then_detach(daemon_factory, project):
    """§12.3: attach to a streaming agent: the response reports streaming, sync follows, then live
    events tagged with the agent; after detach the agent keeps running and this client gets nothing.

    End to end over both transports; test_broker_core.py pins R3.5 in process.

    Covers: R12.3.1, R12.3.2, R12.3.3, R3.5, R6.1.4, R6.4.4, R9.1.3, R9.1.6
    """
    steps = [
        {"blocks": [{"type": "text", "text": "streaming slowly " * 20}], "chunk": 8, "delay_ms": 40},
        text_step("b"),
    ]
    daemon = await daemon_factory(steps)
    driver = await daemon.unix()
    agent = await create_agent(driver, project)
    await attach(driver, agent)
    await driver.send({"type": "prompt", "agent_id": agent, "message": "go"})
    await driver.until_type("message_delta")
    watcher = await daemon.ws()
    resp, _ = await watcher.request({"type": "agent.attach", "id": "a", "agent_id": agent})
    assert resp["data"]["status"] == "streaming"
    assert resp["data"]["info"]["agent_id"] == agent
    after = await watcher.until(
        lambda m: (
            m.get("agent_id") == agent
            and m["type"] != "agent_status_changed"
            and m["type"] != "agent_activity"
        )
    )
    assert after[-1]["type"] == "sync"
    assert after[-1]["status"] == "streaming"
    assert after[-1]["runtime_epoch"] == 0
    delta = (await watcher.until_type("message_delta"))[-1]
    assert delta["agent_id"] == agent
    detached, _ = await watcher.request({"type": "agent.detach", "id": "d", "agent_id": agent})
    assert detached == {"type": "response", "id": "d", "command": "agent.detach", "success": True}
    done = await driver.idle(agent_id=agent)
    finished = [m for m in done if m["type"] == "message_complete" and m["message"]["role"] == "assistant"]
    assert finished[-1]["message"]["content"][0]["text"] == steps[0]["blocks"][0]["text"], "not cut short"
    status, _ = await watcher.request({"type": "agent.status", "id": "s", "agent_id": agent})
    assert status["data"]["agents"][0]["status"] == "idle"
    stray = [
        m
        for m in watcher.seen[watcher.seen.index(detached) :]
        if m.get("agent_id") == agent and m["type"] in ("message_delta", "turn_end", "status")
    ]
    assert stray == []


async def test_dropping_the_only_client_mid_turn_does_not_stop_the_work(daemon_factory, project):
    """The only client (interactive) drops its connection in the middle of a turn: the turn runs to
    its end — a client attaching afterwards finds the whole answer in the window, not an aborted
    part of it.

    End to end over both transports; test_broker_core.py pins R3.5 in process.

    Covers: R3.5, R6.4.4
    """
    text = "streaming on without anyone watching " * 12
    daemon = await daemon_factory([{"blocks": [{"type": "text", "text": text}], "chunk": 8, "delay_ms": 20}])
    driver = await daemon.ws()
    agent = await create_agent(driver, project)
    await attach(driver, agent)
    await driver.send({"type": "prompt", "agent_id": agent, "message": "go"})
    await driver.until_type("message_delta")
    await driver.close()
    later = await daemon.unix()
    await later.until(
        lambda m: m["type"] == "agent_status_changed" and m["agent_id"] == agent and m["status"] == "idle"
    )
    _, sync = await attach(later, agent)
    answer = sync["live_window"]["messages"][-1]
    assert answer["role"] == "assistant"
    assert answer["content"][0]["text"] == text


async def test_one_socket_two_agents_demultiplexed(daemon_factory, transport, project, tmp_path):
    """§12.4: one connection attached to two agents gets both streams, each tagged with its agent.

    Covers: R12.4.1, R12.4.2, R3.3, R5.2.8, R6.2.1
    """
    daemon = await daemon_factory([text_step("from whoever asks")], loop=True)
    client = await connect(daemon, transport)
    other = tmp_path / "other"
    other.mkdir()
    a1 = await create_agent(client, project, name="one")
    a2 = await create_agent(client, other, name="two")
    listed, _ = await client.request({"type": "agent.list", "id": "l"})
    assert {a["agent_id"] for a in listed["data"]["agents"]} == {a1, a2}
    await attach(client, a1)
    await attach(client, a2)
    await client.send({"type": "prompt", "agent_id": a1, "message": "one"})
    await client.send({"type": "prompt", "agent_id": a2, "message": "two"})
    await client.until(
        lambda m: (
            m["type"] == "turn_end"
            and {a1, a2} <= {x.get("agent_id") for x in client.seen if x["type"] == "turn_end"}
        )
    )
    per_agent = {a1: [], a2: []}
    for m in client.seen:
        if m.get("agent_id") in per_agent and m["type"] in ("turn_start", "message_complete", "turn_end"):
            per_agent[m["agent_id"]].append(m["type"])
    assert per_agent[a1][0] == per_agent[a2][0] == "turn_start"
    assert per_agent[a1][-1] == per_agent[a2][-1] == "turn_end"
    prompts = {
        m["agent_id"]: m["message"]["content"][0]["text"]
        for m in client.seen
        if m["type"] == "message_complete" and m["message"]["role"] == "user"
    }
    assert prompts == {a1: "one", a2: "two"}, "each prompt went to the agent its agent_id named"


async def test_reconnect_mid_permission_ask(daemon_factory, transport, project):
    """§12.6: a client drops while a request waits; it reconnects, re-attaches, gets sync with the
    request pending (status waiting_for_permission) and the request re-shown; its answer resolves it.

    Covers: R12.6.1, R12.6.2, R12.6.3, R6.4.22, R6.4.23, R6.4.25, R3.4
    """
    daemon = await daemon_factory([SLOW_WRITE, text_step("done")])
    first = await connect(daemon, transport)
    agent = await create_agent(first, project)
    await attach(first, agent)
    await first.send({"type": "prompt", "agent_id": agent, "message": "write"})
    request = (await first.until_type("permission_request"))[-1]
    await first.close()
    again = await connect(daemon, transport)
    _, sync = await attach(again, agent)
    assert sync["status"] == "waiting_for_permission"
    assert [r["request_id"] for r in sync["pending_requests"]] == [request["request_id"]]
    reshown = (await again.until_type("permission_request"))[-1]
    assert reshown["request_id"] == request["request_id"]
    await again.send(
        {
            "type": "permission_response",
            "agent_id": agent,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    resolved = (await again.until_type("permission_resolved"))[-1]
    assert resolved["decision"] == "allow"
    await again.idle(agent_id=agent)
    assert (project / "made.txt").exists()


async def test_observer_cannot_answer(daemon_factory, project):
    """An observer sees the request but cannot answer it; an interactive client can.

    Covers: R10.1.19, R10.1.20, R6.3.12
    """
    daemon = await daemon_factory([SLOW_WRITE, text_step("done")])
    driver = await daemon.unix()
    watcher = await daemon.ws()
    agent = await create_agent(driver, project)
    await attach(driver, agent)
    await attach(watcher, agent, role="observer")
    await driver.send({"type": "prompt", "agent_id": agent, "message": "write"})
    request = (await watcher.until_type("permission_request"))[-1]
    denied, _ = await watcher.request(
        {
            "type": "permission_response",
            "id": "o",
            "agent_id": agent,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    assert denied["success"] is False
    assert denied["error"]["code"] == "PERMISSION_DENIED"
    await driver.send(
        {
            "type": "permission_response",
            "agent_id": agent,
            "request_id": request["request_id"],
            "decision": "deny",
        }
    )
    resolved = (await watcher.until_type("permission_resolved"))[-1]
    assert resolved["decision"] == "deny"
    assert not (project / "made.txt").exists()


async def test_runtime_crash_mid_turn(daemon_factory, transport, home, project):
    """kill -9 of a runtime mid-turn: agent_exited to every connection, the next prompt restores it
    under a new runtime_epoch with a fresh sync to attachments, and the session kept its history.

    Covers: R10.2.12, R6.4.10, R6.4.15, R9.1.15, R9.1.16, R9.1.13, R9.1.14
    """
    steps = [
        tool_step("sleep", {"seconds": 60}, text="starting a long wait"),
        text_step("back again"),
        text_step("x"),
    ]
    daemon = await daemon_factory(steps)
    client = await connect(daemon, transport)
    bystander = await connect(daemon, transport)
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    assert sync["runtime_epoch"] == 0
    await client.send({"type": "prompt", "agent_id": agent, "message": "wait"})
    await client.until_type("tool_call")
    (pid,) = runtime_pids(home)
    os.kill(pid, signal.SIGKILL)
    exited = (await bystander.until_type("agent_exited"))[-1]
    assert exited["agent_id"] == agent
    assert exited["runtime_state"] == "failed"
    assert exited["exit_code"] == -9
    await client.until_type("agent_exited")
    await client.send({"type": "prompt", "agent_id": agent, "message": "are you back?"})
    fresh = (await client.until(lambda m: m["type"] == "sync" and m.get("agent_id") == agent))[-1]
    assert fresh["runtime_epoch"] == 1
    texts = [b.get("text") for m in fresh["live_window"]["messages"] for b in m["content"]]
    assert "wait" in texts, "the session survived the crash"
    await client.idle(agent_id=agent)


async def test_daemon_restart_keeps_agents(daemon_factory, transport, home, project):
    """kill -9 of the daemon, then a new one: the agents are listed (runtime stopped) and restorable
    with their sessions.

    Covers: R6.4.16, R10.1.2, R12.4.1
    """
    daemon = await daemon_factory([text_step("first answer"), text_step("second answer")])
    client = await connect(daemon, transport)
    agent = await create_agent(client, project, name="keeper")
    await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "remember me"})
    await client.idle(agent_id=agent)
    daemon.proc.send_signal(signal.SIGKILL)
    await daemon.proc.wait()
    for pid in runtime_pids(home):  # its runtimes lost their parent
        os.kill(pid, signal.SIGKILL)
    again = await daemon_factory(None)
    client2 = await connect(again, transport)
    listed, _ = await client2.request({"type": "agent.list", "id": "l"})
    info = next(a for a in listed["data"]["agents"] if a["agent_id"] == agent)
    assert info["name"] == "keeper"
    assert info["runtime_state"] == "stopped"
    _, sync = await attach(client2, agent)
    assert [m["content"][0]["text"] for m in sync["live_window"]["messages"]] == [
        "remember me",
        "first answer",
    ]


async def test_a_client_that_never_reads_is_dropped(daemon_factory, transport, project):
    """A client that stops reading is closed once its outbound queue passes the cap, while another
    client attached to the same agent keeps streaming to the end.

    The daemon runs with a small cap, and the reading client prompts turn after turn, each once it
    has read the last: its backlog is at most one turn (half the cap) however loaded the machine, so
    it is never the one dropped; the stuck client's backlog grows by a turn each time until it
    passes the cap and the kernel's socket buffers.

    Covers: R6.2.3
    """
    cap = 512 * 1024
    text = "x" * (cap // 4)  # a turn sends it twice (deltas, then message_complete)
    most = 60  # turns before giving up: over TCP the kernel's buffers alone hold some 4 MB (16 turns)
    step = {"blocks": [{"type": "text", "text": text}], "chunk": 4000}
    models = [{"id": "m", "context_window": 100 * len(text) * most}]  # no compaction on the way
    daemon = await daemon_factory([step], "--outbound-cap", str(cap), loop=True, models=models, record=False)
    reader = await daemon.unix()
    agent = await create_agent(reader, project)
    await attach(reader, agent)
    attach_line = orjson.dumps({"type": "agent.attach", "id": "stuck", "agent_id": agent})
    if transport == "unix":
        stuck_in, stuck_out = await asyncio.open_unix_connection(str(daemon.socket))
        stuck_out.write(attach_line + b"\n")
    else:
        stuck_in, stuck_out = await raw_websocket(daemon)
        stuck_out.write(masked_text_frame(attach_line))
    try:  # closed even when the test fails, or its transport's warning fails the next test
        await stuck_out.drain()
        got = b""
        while b'"type":"sync"' not in got:  # attached (sync comes last)
            got += await asyncio.wait_for(stuck_in.read(1 << 16), 30)
        # From here the stuck client reads nothing: the kernel's buffers fill, then the daemon's queue.

        def dropped() -> list[str]:
            return [line for line in daemon.output if "does not read fast enough" in line]

        turns = 0
        while turns < most and not dropped():
            await _one_turn(reader, agent, text)
            turns += 1
        assert len(dropped()) == 1, f"no client dropped after {turns} turns: {daemon.output[-5:]}"
        await _one_turn(reader, agent, text)  # the reader is still served after the drop
        turns += 1
        while chunk := await asyncio.wait_for(stuck_in.read(1 << 20), 30):  # no EOF: TimeoutError
            got += chunk
        assert got.count(b'"type":"turn_end"') < turns, "the stuck client was cut off before the end"
    finally:
        stuck_out.close()


async def _one_turn(client, agent: str, text: str) -> None:
    """Prompt ``agent`` and read its turn to the end; the answer must have arrived whole."""
    await client.send({"type": "prompt", "agent_id": agent, "message": "a lot"})
    done = await client.until(lambda m: m["type"] == "turn_end" and m.get("agent_id") == agent)
    complete = [m for m in done if m["type"] == "message_complete" and m["message"]["role"] == "assistant"]
    assert [m["message"]["content"][0]["text"] for m in complete] == [text], "the reader got all of it"


async def test_coalesced_start(daemon_factory, home, project):
    """Two attaches while a stopped agent starts share one runtime process.

    Covers: R6.4.2, R6.4.1
    """
    daemon = await daemon_factory([text_step("x")])
    c = await daemon.unix()
    agent = await create_agent(c, project)
    kill, before = await c.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert kill["data"] == {"deferred": False}
    assert any(m["type"] == "agent_status_changed" and m["runtime_state"] == "stopped" for m in before)
    assert runtime_pids(home) == []
    a, b = await daemon.unix(), await daemon.ws()
    (_ra, sa), (_rb, sb) = await asyncio.gather(attach(a, agent), attach(b, agent))
    assert sa["runtime_epoch"] == sb["runtime_epoch"] == 1
    assert len(runtime_pids(home)) == 1

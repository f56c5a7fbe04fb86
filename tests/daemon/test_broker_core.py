"""The broker's rules in process (``shard.testing.broker``): memory connections, fake runtimes driven
line by line, a fake clock — no sockets, processes or sleeps. The same rules have end-to-end tests
against a real daemon in test_broker.py, test_scenarios.py and test_lifecycle.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shard.daemon.effects import StopRuntime
from shard.daemon.lifecycle import RuntimeMachine
from shard.daemon.record import AgentRecord
from shard.daemon.supervisor import INTERRUPT_GRACE
from shard.protocol.agents import IllegalTransition
from shard.testing.broker import BrokerHarness, MemoryClient


@pytest.fixture
def harness() -> Iterator[BrokerHarness]:
    h = BrokerHarness()
    yield h
    assert h.wire_problems() == []


def _answer(client: MemoryClient, agent: str, request_id: str, **answer: Any) -> dict[str, Any]:
    kind = "ui_response" if "value" in answer else "permission_response"
    return client.request({"type": kind, "agent_id": agent, "request_id": request_id, **answer})


class Recorder:
    """An internal subscriber that keeps what it is given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def event(self, agent_id: str, status: str, event: Any) -> tuple[()]:
        self.events.append((agent_id, event["type"]))
        return ()


# --- first answer wins (§6.3) ---------------------------------------------------------------------


def test_first_answer_wins_and_a_second_is_never_forwarded(harness):
    """Two interactive clients answer the same permission and UI requests: only the first answer of
    each reaches the runtime (attributed to its client), the second is acknowledged with success and
    dropped; so is an answer to a request already resolved, or unknown.

    Covers: R6.3.1, R6.3.2, R6.3.3, R6.3.4, R6.3.5
    """
    c1, c2 = harness.connect(), harness.connect("websocket")
    agent = c1.create()
    c1.attach(agent)
    c2.attach(agent)
    runtime = harness.runtime(agent)
    runtime.ask("req-1")
    runtime.emit({"type": "ui_request", "request_id": "req-2", "kind": "input", "title": "name?"})
    assert [m["request_id"] for m in c2.of_type("permission_request") + c2.of_type("ui_request")] == [
        "req-1",
        "req-2",
    ]
    for request_id, answer in (("req-1", {"decision": "allow"}), ("req-2", {"value": "x"})):
        assert _answer(c1, agent, request_id, **answer)["success"] is True
        late = _answer(c2, agent, request_id, **answer)
        assert late["success"] is True
        assert "error" not in late
    forwarded = runtime.got("permission_response") + runtime.got("ui_response")
    assert [(c["request_id"], c["source"]) for c in forwarded] == [
        ("req-1", "unix-client-1"),
        ("req-2", "unix-client-1"),
    ]
    runtime.emit({"type": "permission_resolved", "request_id": "req-1", "decision": "allow"})
    assert _answer(c2, agent, "req-1", decision="deny")["success"] is True
    assert _answer(c2, agent, "req-unknown", decision="deny")["success"] is True
    assert len(runtime.got("permission_response")) == 1
    for client in (c1, c2):
        assert [m["request_id"] for m in client.of_type("permission_resolved")] == ["req-1"]


def test_an_answer_that_does_not_fit_is_refused_and_the_request_stays_open(harness):
    """An invalid answer (a choice not offered) is INVALID_REQUEST and does not use up the request:
    the next valid answer is still the first, and forwarded.

    Covers: R6.3.3, R8.7
    """
    client = harness.connect()
    agent = client.create()
    client.attach(agent)
    runtime = harness.runtime(agent)
    runtime.emit(
        {**runtime.ask("req-1"), "choices": [{"id": "allow_once", "label": "Allow once", "intent": "allow"}]}
    )
    bad = _answer(client, agent, "req-1", choice_id="allow_forever")
    assert bad["error"]["code"] == "INVALID_REQUEST"
    assert runtime.got("permission_response") == []
    assert _answer(client, agent, "req-1", choice_id="allow_once")["success"] is True
    assert [c["choice_id"] for c in runtime.got("permission_response")] == ["allow_once"]


# --- detach and drop (R3.5, §6.1) -----------------------------------------------------------------


def test_detach_and_a_dropped_connection_never_abort_the_work(harness):
    """A client that detaches, and then one whose connection drops, in the middle of a turn: the
    runtime is sent nothing but the news that nobody can answer — no abort, no command — and keeps
    streaming to whoever is still attached; the detached client gets no more of its events.

    Covers: R3.5, R6.1.4, R6.2.1
    """
    driver, watcher, dropper = harness.connect(), harness.connect(), harness.connect()
    agent = driver.create()
    for client in (driver, watcher, dropper):
        client.attach(agent)
    runtime = harness.runtime(agent)
    driver.request({"type": "prompt", "agent_id": agent, "message": "go"})
    runtime.emit({"type": "status", "status": "streaming"})
    before = list(runtime.commands)
    assert driver.request({"type": "agent.detach", "agent_id": agent})["success"] is True
    dropper.close()
    watcher.close()
    runtime.delta("still going")
    new = runtime.commands[len(before) :]
    assert [c["type"] for c in new] == ["runtime.responders"], new
    assert new[-1]["present"] is False
    assert harness.stops == []
    assert harness.kills == []
    assert driver.of_type("message_delta") == []
    assert (
        driver.request({"type": "agent.status", "agent_id": agent})["data"]["agents"][0]["status"]
        == "streaming"
    )


# --- attach ordering (§6.4) -----------------------------------------------------------------------


def test_attach_gets_sync_then_every_later_event_exactly_once(harness):
    """While an attacher's sync is on its way the runtime keeps emitting: those events are in the
    snapshot, so the attacher must not get them; every event after the snapshot reaches it exactly
    once, after the attach response and the sync; the clients attached before see every event once.
    A command the attacher pipelined behind agent.attach waits for the attach.

    Covers: R6.4.3, R6.4.4, R6.4.5, R6.4.6, R6.2.2, R9.1.3
    """
    early, late = harness.connect(), harness.connect()
    agent = early.create()
    early.attach(agent)
    runtime = harness.runtime(agent)
    runtime.emit({"type": "status", "status": "streaming"})
    runtime.auto_sync = False
    late.send({"type": "agent.attach", "id": "a", "agent_id": agent})
    late.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "queued behind the attach"})
    runtime.delta("1")
    runtime.delta("2")  # both emitted while the sync is pending: they are in the snapshot
    assert late.of_type("sync") + late.of_type("message_delta") == []
    assert runtime.got("prompt") == [], "the pipelined prompt waits for the attach"
    sync_command = runtime.got("runtime.sync")[-1]
    runtime.respond(sync_command, {**runtime.snapshot(), "streaming": {"message_id": "msg-1", "blocks": []}})
    runtime.delta("3")
    runtime.delta("4")
    mine = [m for m in late.received if m.get("id") == "a" or m["type"] in ("sync", "message_delta")]
    assert [m["type"] for m in mine] == [
        "response",
        "sync",
        "message_delta",
        "message_delta",
    ]
    assert [m["text_delta"] for m in late.of_type("message_delta")] == ["3", "4"]
    assert [m["text_delta"] for m in early.of_type("message_delta")] == ["1", "2", "3", "4"]
    assert [c["message"] for c in runtime.got("prompt")] == ["queued behind the attach"]


def test_attaches_to_a_stopped_agent_share_one_start(harness):
    """Two clients attach a stopped agent while its runtime starts: one runtime is spawned, both are
    attached once it is ready, each with a sync.

    Covers: R6.4.1, R6.4.2, R6.4.16
    """
    admin = harness.connect()
    agent = admin.create()
    assert admin.request({"type": "agent.terminate", "agent_id": agent})["data"] == {"deferred": False}
    harness.auto_ready = False
    a, b = harness.connect(), harness.connect()
    for client in (a, b):
        client.send({"type": "agent.attach", "id": "at", "agent_id": agent})
    assert len(harness.runtimes) == 2, "one new generation for both"
    assert a.of_type("sync") == b.of_type("sync") == []
    harness.runtime(agent).ready()
    for client in (a, b):
        assert client.response("at")["success"] is True
        assert [s["runtime_epoch"] for s in client.of_type("sync")] == [1]


# --- responders, observers, internal subscribers, delegation (§6.3) -------------------------------


def test_observers_and_internal_subscribers_are_not_responders(harness):
    """An agent watched by an observer and by an internal subscriber has nobody who can answer: its
    runtime is told so (and its headless policy decides); the subscriber receives the agent's events
    all the while; an interactive client is a responder until it detaches; an observer cannot answer.

    Covers: R6.3.12, R6.3.13, R6.3.14, R6.3.15, R10.1.19, R10.1.20, R10.2.19
    """
    admin, observer = harness.connect(), harness.connect()
    agent = admin.create()
    recorder = Recorder()
    harness.broker.subscribe(agent, recorder)
    observer.attach(agent, role="observer")
    runtime = harness.runtime(agent)
    runtime.emit({"type": "status", "status": "streaming"})
    runtime.delta("hi")
    assert [c["present"] for c in runtime.got("runtime.responders")] == [False]
    assert (agent, "status") in recorder.events
    assert (agent, "message_delta") in recorder.events
    runtime.ask("req-1")
    refused = _answer(observer, agent, "req-1", decision="allow")
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    admin.attach(agent)
    admin.request({"type": "agent.detach", "agent_id": agent})
    assert [c["present"] for c in runtime.got("runtime.responders")] == [False, True, False]
    assert runtime.got("permission_response") == []


def test_child_requests_go_to_the_nearest_interactive_ancestor_and_are_shown_again(harness):
    """A grandchild with only an observer, a child with nobody, a root with an interactive client:
    the grandchild's request is shown to the root's client with the grandchild's agent_id (its
    runtime is told a responder exists); that client drops and the request stays open; a client that
    attaches the root later is shown it and its answer resolves the grandchild's request.

    Covers: R6.3.8, R6.3.9, R6.3.10, R6.3.11, R6.4.23, R6.4.24, R6.4.25
    """
    boss, watcher = harness.connect(), harness.connect()
    root = boss.create()
    boss.attach(root)
    child = boss.create(parent_agent_id=root)
    grandchild = boss.create(parent_agent_id=child)
    watcher.attach(grandchild, role="observer")
    runtime = harness.runtime(grandchild)
    assert runtime.responders_present is True
    runtime.ask("req-g")
    (shown,) = boss.of_type("permission_request")
    assert shown["agent_id"] == grandchild
    boss.close()
    assert runtime.responders_present is False
    boss2 = harness.connect()
    boss2.attach(root)
    (again,) = boss2.of_type("permission_request")
    assert (again["agent_id"], again["request_id"]) == (grandchild, "req-g")
    assert _answer(boss2, grandchild, "req-g", decision="allow")["success"] is True
    assert [c["source"] for c in runtime.got("permission_response")] == ["unix-client-3"]
    runtime.emit({"type": "permission_resolved", "request_id": "req-g", "decision": "allow"})
    assert [m["agent_id"] for m in boss2.of_type("permission_resolved")] == [grandchild]
    assert len(watcher.of_type("permission_resolved")) == 1


def test_a_client_watching_the_child_and_driving_the_parent_gets_each_request_once(harness):
    """One connection, observer of a child and interactive on its parent: the child's delegated
    request, its resolution, and the request shown again on a later attach reach it once each
    (as an attachment of the child, not a second time by delegation).

    Covers: R6.3.9, R6.2.1
    """
    both = harness.connect()
    parent = both.create()
    both.attach(parent)
    child = both.create(parent_agent_id=parent)
    both.attach(child, role="observer")
    runtime = harness.runtime(child)
    runtime.ask("req-1")
    assert [m["request_id"] for m in both.of_type("permission_request")] == ["req-1"]
    runtime.emit({"type": "permission_resolved", "request_id": "req-1", "decision": "deny"})
    assert len(both.of_type("permission_resolved")) == 1
    runtime.ask("req-2")
    other = harness.connect()
    other.attach(parent)  # the parent's clients change: the open request is shown again, to the new one
    assert [m["request_id"] for m in both.of_type("permission_request")] == ["req-1", "req-2"]
    assert [m["request_id"] for m in other.of_type("permission_request")] == ["req-2"]
    late = harness.connect()  # watches the child first, and only then takes the parent
    late.attach(child, role="observer")
    runtime.ask("req-3")
    late.attach(parent)  # req-2 came in its sync, req-3 as the child's event: neither again
    assert [m["request_id"] for m in late.of_type("permission_request")] == ["req-3"]


def test_an_agents_own_interactive_client_answers_before_any_ancestor(harness):
    """Covers: R6.3.8, R8.10"""
    boss, own = harness.connect(), harness.connect()
    parent = boss.create()
    boss.attach(parent)
    child = boss.create(parent_agent_id=parent)
    own.attach(child)
    harness.runtime(child).ask("req-c")
    assert boss.of_type("permission_request") == []
    assert _answer(boss, child, "req-c", decision="allow")["error"]["code"] == "NOT_ATTACHED"


# --- routing (§5) ---------------------------------------------------------------------------------


def test_commands_are_routed_by_agent_id_and_answered_with_their_own_id(harness):
    """Two clients use the same id for commands to one agent: each response goes back to its own
    sender with its id and the agent_id; the runtime saw neither client id nor agent_id.

    Covers: R5.1.2, R5.2.1, R5.2.3, R8.9, R8.10, R8.8
    """
    a, b = harness.connect(), harness.connect()
    agent = a.create()
    a.attach(agent)
    b.attach(agent)
    runtime = harness.runtime(agent)
    for client in (a, b):
        client.send({"type": "list_modes", "id": "same", "agent_id": agent})
    first, second = runtime.got("list_modes")
    assert first["id"] != second["id"]
    assert "agent_id" not in first
    runtime.respond(second, {"modes": [], "active": "build"})
    runtime.respond(first, {"modes": [], "active": "plan"})
    assert a.response("same")["data"]["active"] == "plan"
    assert b.response("same")["data"]["active"] == "build"
    assert a.response("same")["agent_id"] == agent
    stranger = harness.connect()
    assert stranger.request({"type": "abort", "agent_id": agent})["error"]["code"] == "NOT_ATTACHED"
    assert stranger.request({"type": "abort"})["error"]["code"] == "NOT_ATTACHED"
    assert stranger.request({"type": "abort", "agent_id": "agent-x"})["error"]["code"] == "NOT_FOUND"


# --- runtime generations --------------------------------------------------------------------------


def test_a_crash_closes_open_requests_and_a_replacement_sends_a_fresh_sync(harness):
    """The runtime crashes with a request open: its viewers get it denied by runtime-exited, every
    connection gets agent_exited and runtime_state failed, a command in flight is answered with an
    error; the next command restores the agent under runtime_epoch 1 and its attachments get a
    fresh sync before the command is forwarded.

    Covers: R10.2.12, R6.4.10, R6.4.15, R9.1.13, R9.1.14, R9.1.15, R9.1.16
    """
    client, bystander = harness.connect(), harness.connect()
    agent = client.create()
    assert client.attach(agent)["runtime_epoch"] == 0
    runtime = harness.runtime(agent)
    runtime.ask("req-1")
    client.send({"type": "list_models", "id": "in-flight", "agent_id": agent})
    runtime.exit(-9, "Killed")
    assert client.response("in-flight")["error"]["code"] == "INTERNAL_ERROR"
    (closed,) = client.of_type("permission_resolved")
    assert (closed["decision"], closed["source"]) == ("deny", "runtime-exited")
    (exited,) = bystander.of_type("agent_exited")
    assert exited["exit_code"] == -9
    assert bystander.of_type("agent_status_changed")[-1]["runtime_state"] == "failed"
    assert client.request({"type": "prompt", "agent_id": agent, "message": "again"})["id"]
    fresh = client.of_type("sync")[-1]
    assert fresh["runtime_epoch"] == 1
    replacement = harness.runtime(agent)
    assert replacement is not runtime
    assert [c["message"] for c in replacement.got("prompt")] == ["again"]
    assert client.received.index(fresh) < len(client.received) - 1


def test_idle_runtimes_are_reaped_and_active_ones_never(harness):
    """The idle timer starts when the runtime goes idle and stops it only after the whole period;
    while the agent streams or waits for a permission answer it never expires, however long; once
    idle again it is reaped; a new command restores it.

    Covers: R6.4.13, R6.4.14, R6.4.15
    """
    client = harness.connect()
    agent = client.create()
    client.attach(agent)
    runtime = harness.runtime(agent)
    harness.advance(599)
    assert harness.stops == []
    runtime.emit({"type": "status", "status": "streaming"})
    assert harness.timers == {}, "no idle clock runs while the agent works"
    harness.advance(6000)
    runtime.emit({"type": "status", "status": "waiting_for_permission"})
    harness.advance(6000)
    assert harness.stops == []
    runtime.emit({"type": "status", "status": "idle"})
    harness.advance(599.9)
    assert harness.stops == []
    harness.advance(0.1)
    assert harness.stops == [runtime.gen]
    assert client.request({"type": "agent.status", "agent_id": agent})["data"]["agents"][0][
        "runtime_state"
    ] == ("stopped")
    client.request({"type": "prompt", "agent_id": agent, "message": "wake"})
    assert harness.runtime(agent) is not runtime


def test_a_command_in_flight_keeps_the_runtime_alive(harness):
    """A client's command the runtime has not answered is work: no reaping until it is answered.

    Covers: R6.4.13
    """
    client = harness.connect()
    agent = client.create()
    client.attach(agent)
    runtime = harness.runtime(agent)
    client.send({"type": "session_op", "id": "s", "agent_id": agent, "op": "list"})
    harness.advance(6000)
    assert harness.stops == []
    runtime.respond(runtime.got("session_op")[0], {"sessions": []})
    harness.advance(600)
    assert harness.stops == [runtime.gen]


def test_terminate_is_deferred_while_busy_and_answered_after_the_exit_when_idle(harness):
    """Covers: R10.1.22, R10.1.23, R10.1.24, R6.4.11"""
    harness.auto_exit = False
    client = harness.connect()
    agent = client.create()
    client.attach(agent)
    runtime = harness.runtime(agent)
    runtime.emit({"type": "status", "status": "streaming"})
    assert client.request({"type": "agent.terminate", "agent_id": agent})["data"] == {"deferred": True}
    assert harness.stops == []
    runtime.emit({"type": "status", "status": "idle"})
    assert harness.stops == [runtime.gen]
    runtime.exit(0)
    assert "agent_exited" not in client.types()
    other = client.create()
    client.send({"type": "agent.terminate", "id": "t", "agent_id": other})
    assert harness.stops[-1] is harness.runtime(other).gen
    assert [m for m in client.received if m.get("id") == "t"] == [], "answered only once it has exited"
    harness.runtime(other).exit(0)
    assert client.response("t")["data"] == {"deferred": False}


def test_the_runtime_limit_stops_the_idle_longest_or_refuses(harness):
    """At the limit a start stops the inactive runtime idle longest and spawns only after it has
    exited; with every runtime busy the start is a retryable RUNTIME_START_FAILED naming the limit,
    and the agent is kept.

    Covers: R8.14, R6.4.9
    """
    harness.broker.supervisor.max_runtimes = 2
    harness.auto_exit = False
    client = harness.connect()
    older = client.create()
    harness.advance(10)
    newer = client.create()
    client.send({"type": "agent.create", "id": "third", "cwd": "/p3"})
    assert harness.stops == [harness.runtime(older).gen]
    assert len(harness.runtimes) == 2, "no spawn before the stopped runtime has exited"
    harness.runtime(older).exit(0)
    assert len(harness.runtimes) == 3
    assert client.response("third")["success"] is True
    for agent in (newer, client.response("third")["data"]["agent_id"]):
        harness.runtime(agent).emit({"type": "status", "status": "streaming"})
    refused = client.request({"type": "agent.create", "cwd": "/p4"})
    assert refused["error"]["code"] == "RUNTIME_START_FAILED"
    assert refused["error"]["data"]["limit"] == 2
    assert refused["error"]["data"]["retryable"] is True
    assert refused["error"]["data"]["agent_id"] in harness.manifests.rows


def test_shutdown_waits_for_every_runtime(harness):
    """Graceful: every runtime's stdin is closed and the daemon stops once all have exited; force:
    they are killed.

    Covers: R10.1.28, R10.1.29, R10.1.30
    """
    harness.auto_exit = False
    client = harness.connect()
    a, b = client.create(), client.create()
    assert client.request({"type": "daemon.shutdown"})["success"] is True
    assert {g.agent_id for g in harness.stops} == {a, b}
    harness.runtime(a).exit(0)
    assert not harness.stopped
    harness.runtime(b).exit(0)
    assert harness.stopped
    forced = BrokerHarness()
    forced.connect().create()
    forced.shutdown(force=True)
    assert [force for _, force in forced.kills] == [True]
    assert forced.stopped


def _signals(harness: BrokerHarness) -> list[tuple[str, str]]:
    """Every stop and kill the broker asked for, in order: (what, agent_id)."""
    return [
        ("stop now" if isinstance(e, StopRuntime) and e.now else type(e).__name__, e.gen.agent_id)
        for e in harness.signals
    ]


def test_ctrl_c_says_what_it_waits_for_stops_every_runtime_now_and_kills_after_the_grace(harness):
    """Ctrl-C (``interrupt``): one line saying what the daemon waits for, by what each runtime is
    doing; every runtime is told to stop its work now — none is killed then; one that has not
    exited when the grace ends is killed, said in a line, and the daemon stops once all are gone."""
    harness.auto_exit = False
    client = harness.connect()
    streaming, asking, idle = client.create(), client.create(), client.create()
    harness.runtime(streaming).emit({"type": "status", "status": "streaming"})
    harness.runtime(asking).emit({"type": "status", "status": "waiting_for_permission"})
    harness.perform(harness.broker.interrupt())
    assert harness.logs == [
        "shard daemon: stopping 3 runtimes (1 streaming, 1 waiting for a permission answer, 1 idle)…"
        " (Ctrl-C again stops them at once)"
    ]
    assert _signals(harness) == [("stop now", a) for a in (streaming, asking, idle)]
    harness.runtime(streaming).exit(0)
    harness.runtime(idle).exit(0)
    harness.advance(INTERRUPT_GRACE - 0.1)
    assert not harness.kills, "not before the grace is over"
    harness.advance(0.1)
    assert harness.logs[-1] == f"shard daemon: 1 runtime did not stop within 1.5 s: killing {asking}"
    assert _signals(harness)[3:] == [("KillRuntime", asking)]
    assert harness.kills[-1][1] is True
    assert not harness.stopped
    harness.runtime(asking).exit(-9)
    assert harness.stopped
    assert not harness.timers, "the grace timer is gone with the runtimes"
    last = {m["agent_id"]: m["runtime_state"] for m in client.of_type("agent_status_changed")}
    assert set(last.values()) == {"stopped"}, "a stop it asked for is no crash"
    assert not client.of_type("agent_exited")


def test_a_second_ctrl_c_kills_at_once(harness):
    """A second interrupt does not wait for the grace: what is left is killed now, and said."""
    harness.auto_exit = False
    client = harness.connect()
    agent = client.create()
    harness.runtime(agent).emit({"type": "status", "status": "streaming"})
    harness.perform(harness.broker.interrupt())
    assert harness.logs == [
        "shard daemon: stopping 1 runtime (1 streaming)… (Ctrl-C again stops them at once)"
    ]
    harness.perform(harness.broker.interrupt())
    assert harness.logs[-1] == f"shard daemon: stopping at once: killing {agent}"
    assert _signals(harness) == [("stop now", agent), ("KillRuntime", agent)]
    assert not harness.timers
    harness.runtime(agent).exit(-9)
    assert harness.stopped


def test_ctrl_c_during_a_graceful_shutdown_stops_the_turns_now(harness):
    """``daemon.shutdown`` lets turns finish; Ctrl-C meanwhile tells the runtimes still finishing
    to stop now. With no runtime at all, Ctrl-C stops the daemon at once."""
    harness.auto_exit = False
    client = harness.connect()
    agent = client.create()
    harness.runtime(agent).emit({"type": "status", "status": "streaming"})
    assert client.request({"type": "daemon.shutdown"})["success"] is True
    harness.perform(harness.broker.interrupt())
    assert _signals(harness) == [("StopRuntime", agent), ("stop now", agent)]
    harness.runtime(agent).exit(0)
    assert harness.stopped
    empty = BrokerHarness()
    empty.perform(empty.broker.interrupt())
    assert empty.logs == ["shard daemon: stopping…"]
    assert empty.stopped


def test_an_oversized_response_answers_its_waiter(harness):
    """A runtime response over the cap is dropped, and the client that waited for it is answered
    with an error instead of waiting for ever."""
    from shard.protocol.framing import Oversized

    client = harness.connect()
    agent = client.create()
    client.attach(agent)
    runtime = harness.runtime(agent)
    client.send({"type": "list_models", "id": "big", "agent_id": agent})
    (command,) = runtime.got("list_models")
    prefix = b'{"type":"response","id":"' + command["id"].encode() + b'","command":"list_models"'
    harness.perform(harness.broker.runtime_oversized(runtime.gen, Oversized(1 << 27, prefix)))
    assert client.response("big")["error"]["code"] == "INTERNAL_ERROR"
    assert any("over the cap" in line for line in harness.logs)


def test_a_stored_agent_starts_stopped_and_is_restored_on_attach():
    """Covers: R6.4.16, R10.1.2"""
    record = AgentRecord(agent_id="agent-kept", session_id="sess-kept", cwd="/p", started_at=1.0)
    harness = BrokerHarness(records=[record])
    client = harness.connect()
    listed = client.request({"type": "agent.list"})["data"]["agents"]
    assert [(a["agent_id"], a["runtime_state"]) for a in listed] == [("agent-kept", "stopped")]
    assert client.attach("agent-kept")["runtime_epoch"] == 0


def test_runtime_states_move_only_along_the_table():
    machine = RuntimeMachine()
    assert machine.move("starting")
    assert not machine.move("starting")
    with pytest.raises(IllegalTransition):
        machine.move("stopping")
    assert machine.move("running")
    assert machine.move("stopping")
    with pytest.raises(IllegalTransition):
        machine.move("failed")
    assert machine.move("stopped")

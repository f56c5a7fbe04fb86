"""``agent.remove`` through the broker in memory (additive to PROTOCOL §10.1, ARCHITECTURE → The
daemon → Removing an agent): every case of a removal without a process or a sleep. The real daemon's
side is ``test_removal.py``; jobs and workspaces have theirs beside their other tests."""

from __future__ import annotations

import pytest

from shard.testing.broker import BrokerHarness, MemoryClient


@pytest.fixture
def harness():
    h = BrokerHarness()
    yield h
    assert h.wire_problems() == []


def remove(client: MemoryClient, agent_id: str) -> dict:
    return client.request({"type": "agent.remove", "agent_id": agent_id})


def removed_events(client: MemoryClient) -> list[str]:
    return [m["agent_id"] for m in client.of_type("agent_removed")]


def test_a_stopped_agent_is_removed_at_once_and_every_client_is_told(harness: BrokerHarness):
    """A stopped agent leaves the registry at once: the answer names it, every connection (attached
    or not) gets agent_removed with the session kept, agent.list no longer has it, and any later
    command naming it is NOT_FOUND.

    Covers: R5.2.4, R6.4.7, R12.4.1
    """
    client, other = harness.connect(), harness.connect("websocket")
    agent = client.create()
    session = harness.manifests.rows[agent].session_id
    stopped = client.request({"type": "agent.terminate", "agent_id": agent})
    assert stopped["data"] == {"deferred": False}

    answer = remove(client, agent)
    assert answer["success"] is True, answer
    assert answer["data"] == {"removed": [agent]}
    for who in (client, other):
        (event,) = who.of_type("agent_removed")
        assert event == {"type": "agent_removed", "agent_id": agent, "session_id": session}
        listed = who.request({"type": "agent.list"})["data"]["agents"]
        assert agent not in [a["agent_id"] for a in listed]
    assert agent not in harness.manifests.rows
    for message in ({"type": "agent.attach", "agent_id": agent}, {"type": "agent.remove", "agent_id": agent}):
        refused = other.request(message)
        assert refused["error"]["code"] == "NOT_FOUND", refused


def test_an_unknown_agent_is_not_found(harness: BrokerHarness):
    """Additive (agent.remove): an unknown id is NOT_FOUND, as for every agent.* command."""
    client = harness.connect()
    refused = remove(client, "agent-nope")
    assert (refused["success"], refused["error"]["code"]) == (False, "NOT_FOUND")
    assert client.of_type("agent_removed") == []


def test_a_running_agent_is_stopped_first_then_removed(harness: BrokerHarness):
    """Removing an agent mid-turn signals its runtime (SIGTERM: the turn is aborted and saved) and
    answers once the process has exited; meanwhile the agent takes no new work (CONFLICT), and after
    the grace a runtime that is still there is killed. Its open request is closed for its viewers.
    (Additive: no rule of the contract names agent.remove.)
    """
    harness.auto_exit = False
    client, other = harness.connect(), harness.connect()
    agent = client.create()
    other.attach(agent)
    runtime = harness.runtime(agent)
    runtime.emit({"type": "status", "status": "waiting_for_permission"})
    runtime.ask("req-1")

    client.send({"type": "agent.remove", "id": "rm", "agent_id": agent})
    assert harness.kills == [(runtime.gen, False)]
    assert not [m for m in client.received if m.get("id") == "rm"], "answered once the runtime is gone"
    busy = other.request({"type": "prompt", "agent_id": agent, "message": "more"})
    assert busy["error"]["code"] == "CONFLICT", busy
    again = other.request({"type": "agent.remove", "agent_id": agent})
    assert again["error"]["code"] == "CONFLICT", again

    harness.advance(5.1)
    assert harness.kills == [(runtime.gen, False), (runtime.gen, True)]
    runtime.exit(-9)
    assert client.response("rm")["data"] == {"removed": [agent]}
    closed = other.of_type("permission_resolved")
    assert [(c["request_id"], c["source"]) for c in closed] == [("req-1", "runtime-exited")]
    assert removed_events(other) == [agent]
    assert agent not in harness.manifests.rows


def test_subagents_go_with_their_parent_deepest_first(harness: BrokerHarness):
    """A parent's descendants are removed with it, deepest first and the parent last; an unrelated
    agent stays.

    Covers: R10.1.8
    """
    client = harness.connect()
    parent = client.create()
    child = client.create(parent_agent_id=parent)
    grandchild = client.create(parent_agent_id=child)
    bystander = client.create()

    answer = remove(client, parent)
    assert answer["data"] == {"removed": [grandchild, child, parent]}
    assert removed_events(client) == [grandchild, child, parent]
    assert set(harness.manifests.rows) == {bystander}
    assert all(r.exited for r in harness.runtimes if r.gen.agent_id != bystander)


def test_a_queued_start_is_cancelled(harness: BrokerHarness):
    """A start waiting for a place under the runtime limit is dropped: whoever waited for it is
    told the agent was removed, and the removal answers without a process to wait for."""
    harness = BrokerHarness(max_runtimes=1, auto_exit=False)
    client, other = harness.connect(), harness.connect()
    first = client.create()
    client.send({"type": "agent.create", "id": "second", "cwd": "/project"})
    (event,) = other.of_type("agent_spawned")[1:]  # admitted: the idle first runtime is stopping
    second = event["agent_id"]
    assert harness.stops == [harness.runtime(first).gen]

    answer = remove(other, second)
    assert answer["data"] == {"removed": [second]}
    refused = client.response("second")
    assert refused["error"]["code"] == "CONFLICT", refused
    harness.runtime(first).exit(0)
    assert [r.gen.agent_id for r in harness.runtimes] == [first], "the cancelled start never spawned"


def test_a_start_under_way_is_let_finish_then_stopped(harness: BrokerHarness):
    """A runtime still starting is stopped once it is ready (the attach waiting for it gets its
    answer first), or is just gone when its start fails."""
    harness = BrokerHarness(auto_ready=False)
    client, other = harness.connect(), harness.connect()
    client.send({"type": "agent.create", "id": "c", "cwd": "/project"})
    (event,) = other.of_type("agent_spawned")
    agent = event["agent_id"]
    other.send({"type": "agent.remove", "id": "rm", "agent_id": agent})
    harness.runtime(agent).ready()
    assert client.response("c")["success"] is True
    assert other.response("rm")["data"] == {"removed": [agent]}
    assert harness.kills == [(harness.runtime(agent).gen, False)]

    client.send({"type": "agent.create", "id": "c2", "cwd": "/project"})
    failing = next(m for m in other.of_type("agent_spawned") if m["agent_id"] != agent)["agent_id"]
    other.send({"type": "agent.remove", "id": "rm2", "agent_id": failing})
    harness.runtime(failing).fail()
    assert other.response("rm2")["data"] == {"removed": [failing]}

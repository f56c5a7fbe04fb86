"""subagent.wait in process (PROTOCOL §10.3): any/all, timeouts that never cancel, snapshots at
acceptance, and a waiter that blocks only its own connection."""

from __future__ import annotations

from jobs.jobkit import batch, changes, command, finish, parent


def _wait(client, parent_id, handles, **fields):
    client.send(
        {"type": "subagent.wait", "id": "w", "parent_agent_id": parent_id, "handles": handles, **fields}
    )


def _answer(client):
    found = [m for m in client.received if m["type"] == "response" and m.get("id") == "w"]
    return found[0] if found else None


def test_wait_all_is_the_default_and_returns_every_run_in_order(harness):
    """A wait on a job returns once all its runs are terminal, with the full ordered detail and the
    aggregate state; while it waits the connection's next command is held back.

    Covers: R10.3.21, R10.3.23, R10.3.30, R10.3.31, R12.5.7
    """
    client, parent_id = parent(harness)
    other = harness.connect()
    data = batch(client, parent_id, "parallel", "a", "b")
    _wait(client, parent_id, [data["job_id"]])
    client.send({"type": "agent.list", "id": "after"})
    finish(harness, data["runs"][1]["agent_id"])
    assert _answer(client) is None
    assert command(other, "status", parent_id)["success"]  # another connection is not blocked
    assert not [m for m in client.received if m.get("id") == "after"]
    finish(harness, data["runs"][0]["agent_id"], "first")
    result = _answer(client)["data"]
    assert result["timed_out"] is False
    assert result["aggregate_state"] == "completed"
    assert [r["index"] for r in result["runs"]] == [0, 1]
    assert result["runs"][0]["final_text"] == "first"
    assert [m for m in client.received if m.get("id") == "after"]  # released after the wait


def test_wait_any_returns_when_one_is_terminal_and_mixes_states(harness):
    """mode any: the first terminal run ends the wait; the aggregate is mixed.

    Covers: R10.3.22, R10.3.30
    """
    client, parent_id = parent(harness)
    a, b = batch(client, parent_id, "parallel", "a", "b")["runs"]
    _wait(client, parent_id, ["a", b["run_id"]], mode="any")
    finish(harness, a["agent_id"])
    result = _answer(client)["data"]
    assert result["aggregate_state"] == "mixed"
    assert [r["state"] for r in result["runs"]] == ["completed", "active"]


def test_a_poll_and_a_timeout_stop_only_the_waiting(harness):
    """timeout 0 answers at once; a timeout answers timed_out after its seconds and never cancels
    the work, which completes later; no timeout waits as long as it takes.

    Covers: R10.3.24, R10.3.25, R10.3.26
    """
    client, parent_id = parent(harness)
    run = batch(client, parent_id, "single", "a")["runs"][0]
    harness.runtime(run["agent_id"]).emit({"type": "status", "status": "streaming"})
    polled = command(client, "wait", parent_id, handles=[run["run_id"]], timeout=0)["data"]
    assert polled["timed_out"] is True
    assert polled["runs"][0]["state"] == "active"
    _wait(client, parent_id, [run["run_id"]], timeout=5)
    harness.advance(4.9)
    assert _answer(client) is None
    harness.advance(0.2)
    assert _answer(client)["data"]["timed_out"] is True
    client.received.clear()
    _wait(client, parent_id, [run["run_id"]])
    harness.advance(3600)
    assert _answer(client) is None
    assert harness.broker.coordinator.leases
    finish(harness, run["agent_id"])
    assert _answer(client)["data"]["runs"][0]["state"] == "completed"


def test_an_agent_handle_snapshots_its_run_at_acceptance(harness):
    """An alias resolves to the run it has when the wait is accepted: the latest terminal one when
    nothing is live.

    Covers: R10.3.27, R10.3.28
    """
    client, parent_id = parent(harness)
    run = batch(client, parent_id, "single", "a")["runs"][0]
    finish(harness, run["agent_id"])
    result = command(client, "wait", parent_id, handles=["a"])["data"]
    assert result["runs"][0]["run_id"] == run["run_id"]
    assert result["timed_out"] is False


def test_a_disconnect_cancels_only_the_waiter(harness):
    """The waiting connection closes: its wait and timer are dropped, the run goes on and completes,
    and the parent's other connection is told.

    Covers: R10.3.29, R10.3.32
    """
    client, parent_id = parent(harness)
    watcher = harness.connect()
    watcher.attach(parent_id)
    run = batch(client, parent_id, "single", "a")["runs"][0]
    _wait(client, parent_id, [run["run_id"]], timeout=100)
    client.close()
    assert harness.broker.coordinator.waits.waiters == {}
    finish(harness, run["agent_id"])
    assert changes(watcher, run["run_id"])[-1] == "completed"

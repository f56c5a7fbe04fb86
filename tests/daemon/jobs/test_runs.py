"""A run's life in process: starting, active, completed/failed, events to the owning parent, the
parallel bound and chains (PROTOCOL §10.3, §11.2, §12.5)."""

from __future__ import annotations

import pytest

from jobs.jobkit import batch, changes, command, create, finish, parent
from shard.daemon.jobs.model import IllegalRunTransition, Job, Run, job_state


def test_a_run_goes_starting_active_completed_and_the_parent_is_told_each_time(harness):
    """The child's runtime is started and given the task as a prompt; once accepted the run is
    active, and its turn_end completes it with the last assistant text as final_text. Each persisted
    transition reaches the parent's job connection and a connection attached to the parent — with
    parent_agent_id as payload, the child as agent_id — and nobody else.

    Covers: R10.3.61, R10.3.62, R10.3.63, R12.5.2, R12.5.4, R12.5.5, R11.2.7
    """
    client, parent_id = parent(harness)
    attached, stranger = harness.connect(), harness.connect()
    attached.attach(parent_id)
    run = create(client, parent_id)["data"]["runs"][0]
    runtime = harness.runtime(run["agent_id"])
    assert [c["type"] for c in runtime.got("prompt")] == ["prompt"]
    (saved,) = harness.manifests.jobs.values()
    assert saved.runs[0].state == "active"
    finish(harness, run["agent_id"], "the answer")
    for who in (client, attached):
        assert changes(who) == ["starting", "active", "completed"]
    assert changes(stranger) == []
    event = client.of_type("subagent_run_changed")[-1]
    assert event["parent_agent_id"] == parent_id
    assert event["agent_id"] == run["agent_id"]
    assert event["previous_state"] == "active"
    assert "ended_at" in event
    assert "final_text" not in event
    assert saved.runs[0].state == "completed"
    assert saved.runs[0].final_text == "the answer"
    waited = command(client, "wait", parent_id, handles=[run["run_id"]])["data"]
    assert waited["runs"][0]["final_text"] == "the answer"
    assert waited["runs"][0]["usage"] == {"input": 10, "output": 3}


def test_a_runs_usage_counts_every_input_token(harness):
    """Issue 27 item 6: the tokens a child's provider read from its cache count as input too."""
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    finish(harness, run["agent_id"], usage={"input": 10, "output": 3, "cache_read": 2164, "cache_write": 0})
    waited = command(client, "wait", parent_id, handles=[run["run_id"]])["data"]
    assert waited["runs"][0]["usage"] == {"input": 2174, "output": 3}


def test_a_turn_with_an_error_or_a_runtime_exit_fails_the_run(harness):
    """An error event during the run's turn makes it failed (the error says only the code); a child
    runtime that exits mid-run fails it too.

    Covers: R10.3.61
    """
    client, parent_id = parent(harness)
    a, b = (r["agent_id"] for r in batch(client, parent_id, "parallel", "a", "b")["runs"])
    finish(harness, a, error=True)
    harness.runtime(b).emit({"type": "status", "status": "streaming"})
    harness.runtime(b).exit(1, "crash")
    states = command(client, "status", parent_id, targets=[a, b])["data"]["agents"]
    assert [s["run"]["state"] for s in states] == ["failed", "failed"]
    assert states[0]["run"]["error"] == "the child's turn failed (PROVIDER_ERROR)"
    assert "exited" in states[1]["run"]["error"]


def test_parallel_runs_are_bounded_by_max_tasks_across_the_parent(harness):
    """With maxTasks 2, a third run waits queued until one of the parent's live runs ends.

    Covers: R10.3.13
    """
    harness.broker.coordinator.policy = harness.broker.coordinator.policy.model_copy(update={"maxTasks": 2})
    client, parent_id = parent(harness)
    first = batch(client, parent_id, "parallel", "a", "b")["runs"]
    third = create(client, parent_id, name="c")["data"]["runs"][0]
    assert changes(client, third["run_id"]) == []
    finish(harness, first[0]["agent_id"])
    assert changes(client, third["run_id"]) == ["starting", "active"]


def test_a_chain_runs_step_by_step_and_a_failed_step_cancels_the_rest(harness):
    """Step 1 starts only when step 0 completes (chain_step follows); step 1 failing cancels step 2,
    which never starts.

    Covers: R10.3.13, R11.2.8
    """
    client, parent_id = parent(harness)
    data = batch(client, parent_id, "chain", "plan", "build", "ship")
    plan, build, ship = data["runs"]
    job = lambda: command(client, "status", parent_id)["data"]["jobs"][0]  # noqa: E731
    assert job()["chain_step"] == 0
    assert changes(client, build["run_id"]) == []
    finish(harness, plan["agent_id"])
    assert job()["chain_step"] == 1
    assert changes(client, build["run_id"]) == ["starting", "active"]
    finish(harness, build["agent_id"], error=True)
    snapshot = job()
    assert [r["state"] for r in snapshot["runs"]] == ["completed", "failed", "cancelled"]
    assert snapshot["state"] == "failed"
    assert all(r.gen.agent_id != ship["agent_id"] for r in harness.runtimes)


def test_a_run_past_its_deadline_times_out_and_its_child_is_stopped(harness):
    """With a run timeout, the deadline is in the snapshot; when it passes the run is timed_out and
    the child is aborted.

    Covers: R11.2.6
    """
    harness.broker.coordinator.run_timeout = 30.0
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    harness.runtime(run["agent_id"]).emit({"type": "status", "status": "streaming"})
    snap = command(client, "status", parent_id, targets=[run["run_id"]])["data"]["agents"][0]["run"]
    assert snap["deadline"] == pytest.approx(harness.wall.now + 30.0)
    harness.advance(31)
    assert changes(client, run["run_id"])[-1] == "timed_out"
    assert harness.runtime(run["agent_id"]).got("abort")


def test_run_states_move_only_along_the_table():
    """Terminal states have no way out (interrupted included); the job state is derived.

    Covers: R11.2.3, R11.2.4, R11.2.11
    """
    run = Run("run-1", "job-1", 0, "a", "t", "agent-1", "a")
    run.move("starting", 1.0)
    run.move("active", 2.0)
    run.move("interrupted", 3.0)
    for state in ("queued", "starting", "active", "completed", "failed", "cancelled"):
        with pytest.raises(IllegalRunTransition):
            run.move(state, 4.0)  # type: ignore[arg-type]
    with pytest.raises(IllegalRunTransition):
        Run("run-2", "job-1", 1, "b", "t", "agent-2", "b").move("active", 1.0)
    live = Run("run-3", "job-1", 2, "c", "t", "agent-3", "c")
    live.move("starting", 1.0)
    live.move("active", 1.0)
    with pytest.raises(IllegalRunTransition):
        live.move("queued", 2.0)
    assert job_state(["queued", "queued"]) == "queued"
    assert job_state(["completed", "active"]) == "running"
    assert job_state(["completed", "completed"]) == "completed"
    assert job_state(["completed", "timed_out"]) == "failed"
    assert job_state(["completed", "cancelled"]) == "cancelled"
    assert Job("job-1", "agent-0", "single", 0.0, [run]).state == "failed"


def test_child_progress_streams_only_to_its_attachments_and_its_requests_go_up(harness):
    """The parent's connections get run transitions but none of the child's progress; a client that
    attaches to the child sees it stream. The child's permission request, with nobody interactive on
    the child, is shown to the parent's interactive client with the child's agent_id, and that
    answer resolves it. The low-level agent.create + attach flow works beside managed children.

    Covers: R12.5.8, R12.5.9, R12.5.10
    """
    client, parent_id = parent(harness)
    client.attach(parent_id)
    run = create(client, parent_id)["data"]["runs"][0]
    child = run["agent_id"]
    runtime = harness.runtime(child)
    runtime.ask("req-7")
    shown = client.of_type("permission_request")
    assert [(m["agent_id"], m["request_id"]) for m in shown] == [(child, "req-7")]
    answer = {"type": "permission_response", "agent_id": child, "request_id": "req-7", "decision": "allow"}
    assert client.request(answer)["success"]
    assert runtime.got("permission_response")[0]["request_id"] == "req-7"
    dashboard = harness.connect()
    dashboard.attach(child, role="observer")
    runtime.delta("child progress")
    assert dashboard.of_type("message_delta")
    assert not [m for m in client.received if m.get("agent_id") == child and m["type"] == "message_delta"]
    admin = harness.connect()
    manual = admin.create("/project", parent_agent_id=parent_id)
    admin.attach(manual)
    assert harness.broker.agents[manual].record.depth == 1

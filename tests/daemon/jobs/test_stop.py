"""subagent.stop and the lease guard in process (PROTOCOL §10.3)."""

from __future__ import annotations

from jobs.jobkit import TASK, batch, changes, command, create, finish, parent


def test_stopping_a_job_cancels_its_queued_and_active_runs_at_once(harness):
    """A job handle cancels every run not yet terminal — active ones and queued chain steps — and the
    answer lists them; the job is cancelled with stopped_at; nothing durable is deleted.

    Covers: R10.3.52, R10.3.53, R10.3.56, R10.3.57, R10.3.59, R10.3.60
    """
    client, parent_id = parent(harness)
    data = batch(client, parent_id, "chain", "a", "b")
    result = command(client, "stop", parent_id, handle=data["job_id"])["data"]
    assert result["job_id"] == data["job_id"]
    assert [(r["run_id"], r["state"]) for r in result["cancelled"]] == [
        (r["run_id"], "cancelled") for r in data["runs"]
    ]
    job = command(client, "status", parent_id)["data"]["jobs"][0]
    assert job["state"] == "cancelled"
    assert "stopped_at" in job
    assert all(r["agent_id"] in harness.manifests.rows for r in data["runs"])
    assert data["job_id"] in harness.manifests.jobs
    again = command(client, "stop", parent_id, handle=data["job_id"])["data"]
    assert again["cancelled"] == []


def test_stopping_one_alias_leaves_its_parallel_siblings_running(harness):
    """An alias handle cancels only that child's run.

    Covers: R10.3.54
    """
    client, parent_id = parent(harness)
    a, b = batch(client, parent_id, "parallel", "a", "b")["runs"]
    result = command(client, "stop", parent_id, handle="A")["data"]
    assert [r["run_id"] for r in result["cancelled"]] == [a["run_id"]]
    finish(harness, b["agent_id"])
    assert changes(client, b["run_id"])[-1] == "completed"


def test_stopping_a_chains_active_step_cancels_the_rest(harness):
    """The run handle of the active step cancels it and every later step.

    Covers: R10.3.55
    """
    client, parent_id = parent(harness)
    first, second = batch(client, parent_id, "chain", "a", "b")["runs"]
    result = command(client, "stop", parent_id, handle=first["run_id"])["data"]
    assert [r["run_id"] for r in result["cancelled"]] == [first["run_id"], second["run_id"]]


def test_a_stopped_active_run_is_aborted_then_closed_then_killed(harness):
    """The child is sent abort at once; still busy after the grace, its stdin is closed; still there
    after another, it is killed.

    Covers: R10.3.58
    """
    harness.auto_exit = False
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    runtime = harness.runtime(run["agent_id"])
    runtime.emit({"type": "status", "status": "streaming"})
    command(client, "stop", parent_id, handle=run["run_id"])
    assert len(runtime.got("abort")) == 1
    assert harness.stops == []
    harness.advance(5.1)
    assert harness.stops == [runtime.gen]
    assert harness.kills == []
    harness.advance(5.1)
    assert harness.kills == [(runtime.gen, True)]


def test_an_aborted_child_that_goes_quiet_is_left_alone(harness):
    """A child that ends its turn after the abort is neither closed nor killed.

    Covers: R10.3.58
    """
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    command(client, "stop", parent_id, handle="scout")
    harness.runtime(run["agent_id"]).emit({"type": "status", "status": "idle"})
    harness.advance(20)
    assert harness.stops == []
    assert harness.kills == []


def test_the_lease_guard_holds_prompts_and_routes_abort_through_the_run(harness):
    """A leased child refuses a direct prompt (CONFLICT) and a steer while queued; a permission
    answer passes; a direct abort cancels the run (recorded on it); once the run is over the child
    takes prompts again, and an agent never leased was never affected.

    Covers: R10.3.68, R10.3.69, R10.3.70, R10.3.71
    """
    client, parent_id = parent(harness)
    human = harness.connect()
    run = create(client, parent_id)["data"]["runs"][0]
    child = run["agent_id"]
    human.attach(child)
    prompt = {"type": "prompt", "agent_id": child, "message": "hi"}
    assert human.request(prompt)["error"]["code"] == "CONFLICT"
    harness.runtime(child).ask("req-1")
    answer = {"type": "permission_response", "agent_id": child, "request_id": "req-1", "decision": "allow"}
    assert human.request(answer)["success"]
    assert harness.runtime(child).got("permission_response")
    assert human.request({"type": "abort", "agent_id": child})["success"]
    snap = command(client, "status", parent_id, targets=[child])["data"]["agents"][0]["run"]
    assert snap["state"] == "cancelled"
    assert snap["error"] == "aborted by a client"
    assert human.request(prompt)["success"]
    assert human.request({**prompt, "agent_id": parent_id})["error"]["code"] == "NOT_ATTACHED"
    human.attach(parent_id)
    assert human.request({**prompt, "agent_id": parent_id})["success"]
    assert TASK not in str(human.received)

"""subagent.relaunch in process (PROTOCOL §10.3): a new job and run on the same durable child."""

from __future__ import annotations

from jobs.jobkit import TASK, changes, command, create, finish, parent
from shard.testing.broker import BrokerHarness


def test_a_finished_child_is_relaunched_on_the_same_agent_and_session(harness):
    """By alias, run id or agent id: a new job_id and run_id, the same agent, session and alias, the
    new task as the child's next prompt (its history kept: same session), answered queued before
    the run moves.

    Covers: R10.3.40, R10.3.41, R10.3.43, R10.3.44, R10.3.45, R10.3.46, R10.3.47
    """
    client, parent_id = parent(harness)
    first = create(client, parent_id)["data"]
    run = first["runs"][0]
    finish(harness, run["agent_id"])
    session = harness.runtime(run["agent_id"]).record.session_id
    for target in ("SCOUT", run["run_id"], run["agent_id"]):
        response = command(client, "relaunch", parent_id, target=target, task=f"{TASK} again")
        data = response["data"]
        assert data["state"] == "queued"
        assert (data["agent_id"], data["alias"]) == (run["agent_id"], "scout")
        assert data["job_id"] != first["job_id"]
        assert data["run_id"] != run["run_id"]
        runtime = harness.runtime(run["agent_id"])
        assert runtime.record.session_id == session
        assert runtime.got("prompt")[-1]["message"] == f"{TASK} again"
        assert changes(client, data["run_id"]) == ["starting", "active"]
        finish(harness, run["agent_id"])
        run = {**run, "run_id": data["run_id"]}
    assert "SECRET-TASK" not in str(client.received)


def test_a_child_with_a_live_run_or_a_bad_request_is_refused_and_nothing_is_written(harness):
    """An active child: CONFLICT; a job id: INVALID_REQUEST; another parent's child: NOT_FOUND; an
    empty task: INVALID_REQUEST — no new job in any case.

    Covers: R10.3.42, R10.3.41
    """
    client, parent_id = parent(harness)
    other = client.create("/other")
    data = create(client, parent_id)["data"]
    theirs = create(client, other, name="theirs")["data"]["runs"][0]
    jobs_before = set(harness.manifests.jobs)
    cases = [
        ("scout", TASK, "CONFLICT"),
        (data["job_id"], TASK, "INVALID_REQUEST"),
        (theirs["agent_id"], TASK, "NOT_FOUND"),
    ]
    finish(harness, theirs["agent_id"])
    for target, task, code in cases:
        response = command(client, "relaunch", parent_id, target=target, task=task)
        assert response["error"]["code"] == code, target
    finish(harness, data["runs"][0]["agent_id"])
    empty = command(client, "relaunch", parent_id, target="scout", task=" ")
    assert empty["error"]["code"] == "INVALID_REQUEST"
    assert set(harness.manifests.jobs) == jobs_before


def test_an_interrupted_run_can_be_relaunched_after_a_restart(harness):
    """After a daemon restart the interrupted child is relaunched explicitly and runs.

    Covers: R10.3.77
    """
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    after = BrokerHarness(manifests=harness.manifests)
    again = after.connect()
    data = command(again, "relaunch", parent_id, target="scout", task=TASK)["data"]
    finish(after, run["agent_id"], "second try")
    waited = command(again, "wait", parent_id, handles=[data["run_id"]])["data"]
    assert waited["runs"][0]["final_text"] == "second try"
    old = command(again, "wait", parent_id, handles=[run["run_id"]])["data"]
    assert old["runs"][0]["state"] == "interrupted"

"""subagent.status and the restart rules in process (PROTOCOL §10.3, §11.2): a new broker on the
same manifests is a daemon restart."""

from __future__ import annotations

from jobs.jobkit import batch, changes, command, create, finish, parent
from shard.testing.broker import BrokerHarness


def test_status_without_targets_lists_the_latest_50_jobs_newest_first(harness):
    """Every direct child with its run, and the parent's own latest 50 jobs, newest first (no other
    parent's); with targets, no jobs.

    Covers: R10.3.48, R10.3.49, R10.3.50
    """
    client, parent_id = parent(harness)
    harness.broker.coordinator.policy = harness.broker.coordinator.policy.model_copy(update={"maxTasks": 60})
    other = client.create("/other")
    create(client, other, name="theirs")
    made = []
    for i in range(52):
        harness.wall.now += 1
        made.append(create(client, parent_id, name=f"n{i}")["data"]["job_id"])
    data = command(client, "status", parent_id)["data"]
    assert [j["job_id"] for j in data["jobs"]] == list(reversed(made))[:50]
    assert len(data["agents"]) == 52
    assert {a["parent_agent_id"] for a in data["agents"]} == {parent_id}
    assert "task" not in str(data["jobs"][0])
    assert data["jobs"][0]["runs"][0]["alias"] == "n51"
    targeted = command(client, "status", parent_id, targets=["n3"])["data"]
    assert "jobs" not in targeted
    assert targeted["agents"][0]["alias"] == "n3"


def test_a_parent_runtime_restart_affects_neither_runs_nor_status(harness):
    """The parent's runtime stops and comes back: its child's run goes on, completes, and status
    still recovers handles and aliases.

    Covers: R10.3.51, R10.3.73, R10.3.74
    """
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    client.request({"type": "agent.kill", "agent_id": parent_id})
    finish(harness, run["agent_id"], "ok")
    client.attach(parent_id)
    snap = command(client, "status", parent_id)["data"]
    assert snap["agents"][0]["alias"] == "scout"
    assert snap["agents"][0]["run"]["state"] == "completed"
    assert snap["agents"][0]["run"]["final_text"] == "ok"


def test_a_daemon_restart_interrupts_live_runs_and_replays_nothing(harness):
    """After a restart: terminal records are as they were; the running single run and parallel runs
    are interrupted; a chain's live step is interrupted and its later steps cancelled, all of it
    saved; no child is started or prompted again.

    Covers: R10.3.72, R10.3.75, R10.3.76, R11.2.10
    """
    client, parent_id = parent(harness)
    done = create(client, parent_id, name="done")["data"]["runs"][0]
    finish(harness, done["agent_id"], "kept")
    single = create(client, parent_id, name="single")["data"]["runs"][0]
    chain = batch(client, parent_id, "chain", "c1", "c2")["runs"]
    after = BrokerHarness(manifests=harness.manifests)
    again = after.connect()
    state = {a["alias"]: a["run"]["state"] for a in command(again, "status", parent_id)["data"]["agents"]}
    assert state == {"done": "completed", "single": "interrupted", "c1": "interrupted", "c2": "cancelled"}
    kept = command(again, "wait", parent_id, handles=[done["run_id"]])["data"]["runs"][0]
    assert kept["final_text"] == "kept"
    assert after.runtimes == []  # nothing replayed
    assert harness.manifests.jobs[
        chain[0]["run_id"] and single["run_id"] and next(iter(harness.manifests.jobs))
    ]
    assert changes(again) == []


def test_a_shutting_down_daemon_ends_no_run_and_starts_none(harness):
    """While the daemon shuts down, its stopped runtimes cut their turns short: a chain's live step
    ending its turn (or its runtime exiting) is no completion, and the next step does not start;
    the next daemon finds the step interrupted and the rest cancelled.

    Covers: R10.3.75, R10.3.76
    """
    client, parent_id = parent(harness)
    c1, c2 = batch(client, parent_id, "chain", "c1", "c2")["runs"]
    single = create(client, parent_id, name="single")["data"]["runs"][0]
    harness.auto_exit = False  # the runtimes wind down as the shutdown stops them
    harness.shutdown()
    finish(harness, c1["agent_id"], "cut short")
    harness.runtime(single["agent_id"]).exit(1)
    assert c2["agent_id"] not in [r.gen.agent_id for r in harness.runtimes]
    after = BrokerHarness(manifests=harness.manifests)
    state = {
        a["alias"]: a["run"]["state"] for a in command(after.connect(), "status", parent_id)["data"]["agents"]
    }
    assert state == {"c1": "interrupted", "c2": "cancelled", "single": "interrupted"}

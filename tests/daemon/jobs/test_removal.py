"""``agent.remove`` of a job's child or parent, in process (additive to PROTOCOL §10.1; ARCHITECTURE
→ The daemon → Removing an agent): a removed agent's queued or live run is cancelled through the
coordinator's own path, the parent hears of it like any cancelled run, and job records stay."""

from __future__ import annotations

from jobs.jobkit import batch, changes, command, create, parent


def test_removing_a_leased_child_cancels_its_run_and_tells_its_parent(harness):
    """The child's active run ends ``cancelled`` ("its agent was removed"), told to the parent's job
    connection and reported into the parent's conversation; the parent and the job record stay, and
    the child is no longer a handle of the parent.

    Covers: R10.3.61, R10.3.65
    """
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    harness.runtime(run["agent_id"]).emit({"type": "status", "status": "streaming"})
    assert changes(client, run["run_id"])[-1] == "active"

    answer = client.request({"type": "agent.remove", "agent_id": run["agent_id"]})
    assert answer["data"] == {"removed": [run["agent_id"]]}
    assert changes(client, run["run_id"])[-1] == "cancelled"
    (told,) = [m for m in client.of_type("subagent_run_changed") if m["state"] == "cancelled"]
    assert told["error"] == "its agent was removed"
    harness.advance(0.1)  # the report goes on a zero-delay timer
    reports = [c for c in harness.runtime(parent_id).got("prompt") if "subagent_report" in c["message"]]
    assert len(reports) == 1
    assert "cancelled" in reports[0]["message"]
    assert parent_id in harness.manifests.rows
    job = command(client, "status", parent_id)["data"]["jobs"][0]
    assert job["runs"][0]["state"] == "cancelled"
    gone = command(client, "status", parent_id, targets=[run["agent_id"]])
    assert gone["error"]["code"] == "NOT_FOUND", gone


def test_removing_a_parent_removes_its_children_and_cancels_their_runs(harness):
    """A parent with a running parallel job: the children are removed before it, each run is
    cancelled, nothing is started in their place, and the job and run records stay in the registry
    as history.

    Covers: R10.3.61
    """
    client, parent_id = parent(harness)
    data = batch(client, parent_id, "parallel", "a", "b")
    kids = [r["agent_id"] for r in data["runs"]]
    spawned = len(harness.runtimes)

    answer = client.request({"type": "agent.remove", "agent_id": parent_id})
    assert answer["data"]["removed"] == [*kids, parent_id]
    assert [changes(client, r["run_id"])[-1] for r in data["runs"]] == ["cancelled", "cancelled"]
    assert len(harness.runtimes) == spawned, "no run started in their place"
    assert data["job_id"] in harness.manifests.jobs
    assert set(harness.manifests.rows).isdisjoint({*kids, parent_id})

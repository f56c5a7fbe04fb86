"""Handles and aliases (PROTOCOL §10.3): typed ids first, then parent-scoped NFKC aliases."""

from __future__ import annotations

import pytest

from jobs.jobkit import batch, command, create, parent
from shard.daemon.jobs import handles
from shard.daemon.jobs.model import Job, Run
from shard.protocol.errors import ShardError


def test_every_kind_of_handle_resolves_within_the_parent(harness):
    """job, run and agent ids and the alias (any case, NFKC-equal) all resolve; the alias of the
    other parent's child of the same name does not cross.

    Covers: R10.3.3, R10.3.5, R10.3.6, R10.3.2
    """
    client, parent_id = parent(harness)
    other = client.create("/other")
    mine = batch(client, parent_id, "parallel", "\uff33cout")  # fullwidth S: NFKC makes it "Scout"
    theirs = batch(client, other, "parallel", "Scout")
    run = mine["runs"][0]
    for handle in (
        mine["job_id"],
        run["run_id"],
        run["agent_id"],
        "scout",
        "SCOUT",
        "\uff33\uff43\uff4f\uff55\uff54",
    ):
        found = command(client, "status", parent_id, targets=[handle])["data"]["agents"]
        assert [a["agent_id"] for a in found] == [run["agent_id"]], handle
    for handle in (theirs["job_id"], theirs["runs"][0]["run_id"], theirs["runs"][0]["agent_id"]):
        refused = command(client, "status", parent_id, targets=[handle])
        assert refused["error"]["code"] == "NOT_FOUND", handle
    stop = command(client, "stop", parent_id, handle=theirs["job_id"])
    assert stop["error"]["code"] == "NOT_FOUND"
    assert (
        command(client, "status", other, targets=["scout"])["data"]["agents"][0]["agent_id"]
        == (theirs["runs"][0]["agent_id"])
    )


def test_typed_ids_are_tried_before_aliases():
    """A handle equal to a typed id resolves to that id, whatever alias exists; names that look like
    typed ids are refused, so no alias can shadow one.

    Covers: R10.3.4
    """
    runs = [Run("run-aaaa", "job-1", 0, "x", "t", "agent-1", "x")]
    job = Job("job-1", "agent-0", "single", 0.0, runs)
    children = {"agent-1": "x", "agent-2": "run-aaaa"}  # an alias spelled like the run id
    assert handles.resolve("run-aaaa", [job], children).run is runs[0]
    assert handles.resolve("job-1", [job], children).job is job
    for name in ("job-9", "RUN-1", "agent-x"):
        with pytest.raises(ShardError):
            handles.check_name(name)
    with pytest.raises(ShardError):
        handles.resolve("job-unknown", [job], children)


def test_aliases_are_unique_in_the_parent_scope(harness):
    """Names already taken by the parent's children, or twice in one request, get -2, -3…; another
    parent's children do not count.

    Covers: R10.3.5, R11.0.21
    """
    client, parent_id = parent(harness)
    other = client.create("/other")
    create(client, other, name="fix")
    first = batch(client, parent_id, "parallel", "fix", "FIX")
    second = create(client, parent_id, name="Fix")
    assert [r["alias"] for r in first["runs"]] == ["fix", "FIX-2"]
    assert second["data"]["runs"][0]["alias"] == "Fix-3"
    info = client.request({"type": "agent.status", "agent_id": first["runs"][1]["agent_id"]})
    assert info["data"]["agents"][0]["alias"] == "FIX-2"


def test_an_agent_handle_names_its_live_run_before_its_latest_terminal_one():
    """With an older terminal run and a queued one, the agent's handle is the queued run; with only
    terminal runs, the one that ended last.

    Covers: R10.3.27
    """
    old = Run("run-old", "job-1", 0, "x", "t", "agent-1", "x", state="completed", ended_at=5.0)
    older = Run("run-older", "job-0", 0, "x", "t", "agent-1", "x", state="failed", ended_at=2.0)
    new = Run("run-new", "job-2", 0, "x", "t", "agent-1", "x")
    jobs = [Job("job-0", "p", "single", 0.0, [older]), Job("job-1", "p", "single", 1.0, [old])]
    assert handles.resolve("x", jobs, {"agent-1": "x"}).run is old
    jobs.append(Job("job-2", "p", "single", 2.0, [new]))
    assert handles.resolve("agent-1", jobs, {"agent-1": "x"}).run is new

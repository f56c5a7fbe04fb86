"""subagent.create in process: validation before side effects, preallocation, the immediate answer,
and privacy of the task text (PROTOCOL §10.3, §11.2, §12.5)."""

from __future__ import annotations

import orjson
import pytest

from jobs.jobkit import TASK, batch, command, create, finish, parent


def test_create_answers_with_queued_runs_before_the_child_starts(harness):
    """The single form (strategy defaults to single) is committed and answered with job, run, agent
    ids and the alias, every run queued, before any child runtime is spawned or any run moves.

    Covers: R10.3.12, R10.3.14, R10.3.18, R10.3.19, R10.3.20, R12.5.1, R11.2.1, R11.2.5
    """
    client, parent_id = parent(harness)
    spawned_before = len(harness.runtimes)
    response = create(client, parent_id)
    assert response["success"], response
    data = response["data"]
    assert data["strategy"] == "single"
    (run,) = data["runs"]
    assert run["state"] == "queued"
    assert run["index"] == 0
    assert run["name"] == "scout"
    assert run["alias"] == "scout"
    assert data["job_id"].startswith("job-")
    assert run["run_id"].startswith("run-")
    assert run["agent_id"].startswith("agent-")
    # the record was committed before the answer: the job, its run and the child's row
    saved = harness.manifests.jobs[data["job_id"]]
    assert [r.run_id for r in saved.runs] == [run["run_id"]]
    assert run["agent_id"] in harness.manifests.rows
    # the response came before any run transition of the job
    kinds = [m["type"] for m in client.received]
    answer = kinds.index("response", kinds.index("response") + 1)  # after agent.create's
    assert "subagent_run_changed" not in kinds[:answer]
    assert len(harness.runtimes) == spawned_before + 1  # the child started only afterwards


def test_ids_are_random_and_not_derived_from_names(harness):
    """Two jobs of the same name get unrelated ids, none containing the name.

    Covers: R11.2.2
    """
    client, parent_id = parent(harness)
    a, b = (create(client, parent_id)["data"] for _ in range(2))
    ids = [a["job_id"], b["job_id"], a["runs"][0]["run_id"], b["runs"][0]["run_id"]]
    assert len(set(ids)) == 4
    assert not any("scout" in i for i in ids)
    assert [a["runs"][0]["alias"], b["runs"][0]["alias"]] == ["scout", "scout-2"]


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"tasks": [{"name": "a", "task": TASK}]}, "INVALID_REQUEST"),  # batch without strategy
        ({"tasks": [{"name": "a", "task": TASK}], "strategy": "fan"}, "INVALID_REQUEST"),
        ({"tasks": [{"name": "a", "task": TASK}] * 2, "strategy": "single"}, "INVALID_REQUEST"),
        ({"tasks": [], "strategy": "parallel"}, "INVALID_REQUEST"),
        (
            {"tasks": [{"name": f"t{i}", "task": TASK} for i in range(9)], "strategy": "parallel"},
            "INVALID_REQUEST",
        ),
        (
            {
                "tasks": [{"name": "ok", "task": TASK}, {"name": "run-x", "task": TASK}],
                "strategy": "parallel",
            },
            "INVALID_REQUEST",
        ),
        (
            {"tasks": [{"name": "ok", "task": TASK}, {"name": "b", "task": "  "}], "strategy": "chain"},
            "INVALID_REQUEST",
        ),
        ({"name": "solo"}, "INVALID_REQUEST"),
        ({"name": "a", "task": TASK, "parent_agent_id": "agent-nobody"}, "NOT_FOUND"),
    ],
)
def test_a_refused_create_leaves_nothing_behind(harness, fields, code):
    """Every part of the request is checked before anything is written: a bad strategy, a batch
    without one, an empty batch, more tasks than maxTasks, a name that looks like a typed id or an
    empty task in the last place — the error code, the connection still serving, and no job, run,
    Agent or alias left (the next create gets the first alias). The error never quotes the task.

    Covers: R10.3.13, R10.3.15, R10.3.17, R10.3.8
    """
    client, parent_id = parent(harness)
    agents_before = set(harness.broker.agents)
    message = {"type": "subagent.create", "parent_agent_id": parent_id, **fields}
    response = client.request(message)
    assert response["success"] is False
    assert response["error"]["code"] == code, response
    assert TASK not in orjson.dumps(response).decode()
    assert harness.manifests.jobs == {}
    assert set(harness.broker.agents) == agents_before
    again = create(client, parent_id, tasks=[{"name": "ok", "task": TASK}], strategy="parallel")
    assert again["data"]["runs"][0]["alias"] == "ok"


def test_depth_over_max_depth_is_refused_before_side_effects(harness):
    """A child's child's child would be at depth 3, over maxDepth 2: refused, nothing written.

    Covers: R10.3.17
    """
    client, parent_id = parent(harness)
    child = create(client, parent_id)["data"]["runs"][0]["agent_id"]
    grandchild = create(client, child)["data"]["runs"][0]["agent_id"]
    jobs_before = dict(harness.manifests.jobs)
    refused = create(client, grandchild)
    assert refused["error"]["code"] == "INVALID_REQUEST"
    assert "maxDepth" in refused["error"]["message"]
    assert harness.manifests.jobs == jobs_before
    assert harness.broker.agents[grandchild].record.depth == 2


def test_a_full_disk_refuses_the_create_and_writes_nothing(harness):
    """The job, its runs and the children's rows are one transaction: a refused write is
    INTERNAL_ERROR and leaves no job, run, Agent or alias, in memory or on disk.

    Covers: R10.3.17
    """
    client, parent_id = parent(harness)
    agents_before = set(harness.broker.agents)
    harness.manifests.full = True
    response = create(client, parent_id, tasks=[{"name": "a", "task": TASK}] * 2, strategy="parallel")
    assert response["error"]["code"] == "INTERNAL_ERROR"
    assert harness.manifests.jobs == {}
    assert set(harness.broker.agents) == agents_before
    assert set(harness.manifests.rows) == agents_before
    harness.manifests.full = False
    assert command(client, "status", parent_id)["data"] == {"agents": [], "jobs": []}
    assert client.of_type("agent_spawned")[-1]["agent_id"] == parent_id


def test_model_provider_and_mode_override_what_the_child_inherits(harness):
    """Without overrides a child inherits the parent's model and mode; with them it gets its own
    (a mode only as strict as the parent's or stricter: tests/security/test_subagent_limits.py).

    Covers: R10.3.16, R12.5.3
    """
    client = harness.connect()
    parent_id = client.create("/project", model="scripted/big", mode="build")
    inherited = create(client, parent_id)["data"]["runs"][0]["agent_id"]
    overridden = create(client, parent_id, model="small", provider="scripted", mode="plan")
    other = overridden["data"]["runs"][0]["agent_id"]
    rows = harness.manifests.rows
    assert (rows[inherited].model, rows[inherited].mode) == ("scripted/big", "build")
    assert (rows[other].model, rows[other].mode) == ("scripted/small", "plan")
    for agent_id in (inherited, other):  # a durable, headless child of the parent, one level down
        assert rows[agent_id].parent_agent_id == parent_id
        assert rows[agent_id].depth == 1
        assert harness.runtime(agent_id).record.headless_policy == "deny"


def test_task_text_never_leaves_the_private_record(harness):
    """Across a whole job — create, status, wait, every event, agent.list, a failure and the logs —
    the task text is nowhere but the job record and the child's prompt.

    Covers: R10.3.7, R10.3.8, R10.3.9, R10.3.10, R10.3.11, R10.3.64, R11.2.9
    """
    client, parent_id = parent(harness)
    watcher = harness.connect()
    data = batch(client, parent_id, "parallel", "a", "b")
    a, b = (r["agent_id"] for r in data["runs"])
    finish(harness, a, "all good")
    finish(harness, b, error=True)
    client.request({"type": "subagent.status", "parent_agent_id": parent_id})
    client.request({"type": "subagent.wait", "parent_agent_id": parent_id, "handles": [data["job_id"]]})
    client.request({"type": "agent.list"})
    everything = orjson.dumps([client.received, watcher.received, harness.logs]).decode()
    assert "SECRET-TASK" not in everything
    saved = harness.manifests.jobs[data["job_id"]]
    assert saved.runs[0].task.startswith(TASK)  # the private record keeps it
    assert harness.runtime(a).got("prompt")[0]["message"].startswith(TASK)  # and the child got it

"""The lease guard holds from the moment a run is accepted, not from the moment it starts (issue 25
item 9; PROTOCOL §10.3 "lease guard"): a client attached to the child of a queued chain step, or of
a run whose child is still starting, can neither prompt it nor steer it, and its abort is the
coordinator's — recorded against the run — in process (``shard.testing.broker``).

What a steer or abort means before the run has started (the protocol says it for active runs): a
``steer`` takes ``subagent.steer``'s strict path, which accepts only an active run, so it is
CONFLICT and nothing reaches the child; an ``abort`` cancels the run as ``subagent.stop`` of it
would — with the later steps of its chain — and the steps before it go on.
"""

from __future__ import annotations

from typing import Any

from shard.testing.broker import BrokerHarness, MemoryClient

TASK = "PRIVATE-TASK: count the ledger"


def _job(client: MemoryClient, parent_id: str, strategy: str, *names: str) -> dict[str, Any]:
    tasks = [{"name": n, "task": f"{TASK} #{n}"} for n in names]
    message = {"type": "subagent.create", "parent_agent_id": parent_id, "tasks": tasks, "strategy": strategy}
    response = client.request(message)
    assert response["success"], response
    return response["data"]


def _runs(client: MemoryClient, parent_id: str, job_id: str) -> list[dict[str, Any]]:
    status = client.request({"type": "subagent.status", "parent_agent_id": parent_id, "targets": [job_id]})
    return [a["run"] for a in status["data"]["agents"]]


def _direct(human: MemoryClient, child: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A person's prompt, steer and abort to ``child``, in that order."""
    prompt = human.request({"type": "prompt", "agent_id": child, "message": "do this instead"})
    steer = human.request({"type": "steer", "agent_id": child, "message": "and this"})
    abort = human.request({"type": "abort", "agent_id": child})
    return prompt, steer, abort


def test_a_queued_chain_steps_child_takes_no_prompt_or_steer_and_its_abort_cancels_the_step():
    """A chain of three, step 0 active: a client attached to step 1's child (which starts its
    runtime) gets CONFLICT for prompt and steer — the child's runtime receives neither — and its
    abort cancels steps 1 and 2 ("aborted by a client") while step 0 runs on and completes; step 1's
    child never gets a task.

    Covers: R10.3.68, R10.3.70, R10.3.35, R10.3.55, R10.3.71
    """
    harness = BrokerHarness()
    client = harness.connect()
    parent_id = client.create("/project")
    data = _job(client, parent_id, "chain", "plan", "build", "ship")
    plan, build, ship = data["runs"]
    assert [r["state"] for r in _runs(client, parent_id, data["job_id"])] == ["active", "queued", "queued"]
    human = harness.connect()
    human.attach(build["agent_id"])
    child = harness.runtime(build["agent_id"])

    prompt, steer, abort = _direct(human, build["agent_id"])
    assert prompt["error"]["code"] == "CONFLICT", prompt
    assert steer["error"]["code"] == "CONFLICT", steer
    assert abort["success"] is True, abort
    assert [c["type"] for c in child.commands if c["type"] in ("prompt", "steer", "runtime.steer")] == []

    runs = _runs(client, parent_id, data["job_id"])
    assert [r["state"] for r in runs] == ["active", "cancelled", "cancelled"]
    assert runs[1]["error"] == runs[2]["error"] == "aborted by a client"
    runtime = harness.runtime(plan["agent_id"])
    runtime.emit({"type": "turn_end", "turn_id": "t", "usage": {"input": 1, "output": 1}})
    assert [r["state"] for r in _runs(client, parent_id, data["job_id"])] == [
        "completed",
        "cancelled",
        "cancelled",
    ]
    assert child.got("prompt") == [], "the cancelled step never got its task"
    assert all(r.gen.agent_id != ship["agent_id"] for r in harness.runtimes)
    assert TASK not in str(human.received)
    assert harness.wire_problems() == []


def test_a_starting_runs_child_takes_no_prompt_or_steer_and_its_abort_cancels_the_run():
    """A run whose child's runtime is up but has not accepted the task yet (``starting``): a client
    attached to the child gets CONFLICT for prompt and steer, and its abort cancels the run —
    recorded on it — and aborts the child's runtime, so the task it is being handed goes nowhere.

    Covers: R10.3.68, R10.3.70, R10.3.58
    """
    harness = BrokerHarness(auto_ready=False)
    client = harness.connect()
    client.send({"type": "agent.create", "id": "p", "cwd": "/project"})
    harness.runtimes[-1].ready()
    parent_id = client.response("p")["data"]["agent_id"]
    data = _job(client, parent_id, "single", "scout")
    (run,) = data["runs"]
    child = harness.runtime(run["agent_id"])
    child.auto_accept = False  # it takes the task, but does not answer yet
    child.ready()
    assert [r["state"] for r in _runs(client, parent_id, data["job_id"])] == ["starting"]
    human = harness.connect()
    human.attach(run["agent_id"])

    prompt, steer, abort = _direct(human, run["agent_id"])
    assert prompt["error"]["code"] == "CONFLICT", prompt
    assert steer["error"]["code"] == "CONFLICT", steer
    assert abort["success"] is True, abort
    (snapshot,) = _runs(client, parent_id, data["job_id"])
    assert (snapshot["state"], snapshot["error"]) == ("cancelled", "aborted by a client")
    sent = [c["type"] for c in child.commands if c["type"] in ("prompt", "steer", "runtime.steer", "abort")]
    assert sent == ["prompt", "abort"], "its task, then the coordinator's abort: nothing of the person's"
    assert child.got("prompt")[0]["message"].startswith(TASK)
    assert harness.wire_problems() == []

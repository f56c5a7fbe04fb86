"""Stopping background subagents end to end: a whole job, and one child of a parallel job (PROTOCOL
§10.3 ``subagent.stop``), against a real daemon and real children on scripted models."""

from __future__ import annotations

from jobs.scenekit import Scene, activity, requests_of, run_changes, task
from shard.testing import text_step, tool_step


async def test_stopping_a_job_cancels_its_queued_and_active_runs(scene: Scene) -> None:
    """A chain of two whose first step sleeps in a tool: stopping the job cancels both at once — the
    active step's child is aborted (its tool stops, it goes idle, it asks the model nothing more)
    and the queued step never starts. Nothing durable is deleted.

    Covers: R10.3.52, R10.3.53, R10.3.55, R10.3.56, R10.3.57, R10.3.58, R10.3.59, R10.3.60, R11.2.8
    """
    await scene.start([tool_step("sleep", {"seconds": 120}), text_step("woke up")])
    parent = await scene.parent("unix")
    data = await parent.create("chain", "sleeper", "after")
    sleeper, after = data["runs"]
    await parent.until_run(sleeper["run_id"], "active")
    await parent.heard(activity(sleeper["agent_id"], "tool"))
    stopped = await parent.ok("stop", handle=data["job_id"])
    assert stopped["job_id"] == data["job_id"]
    assert stopped["cancelled"] == [
        {"run_id": sleeper["run_id"], "agent_id": sleeper["agent_id"], "state": "cancelled"},
        {"run_id": after["run_id"], "agent_id": after["agent_id"], "state": "cancelled"},
    ]
    await parent.client.until(activity(sleeper["agent_id"], "idle"))  # the abort took
    assert run_changes(parent.client, sleeper["run_id"])[-1] == ("active", "cancelled")
    assert run_changes(parent.client, after["run_id"]) == [("queued", "cancelled")]
    status = await parent.ok("status")
    (job,) = status["jobs"]
    assert job["state"] == "cancelled"
    assert "stopped_at" in job
    assert {a["agent_id"] for a in status["agents"]} == {sleeper["agent_id"], after["agent_id"]}
    assert len(requests_of(scene.home, "test")) == 1  # the sleeper's one request; none from "after"
    assert requests_of(scene.home, "test", task("after")) == []
    await scene.audit()


async def test_stopping_one_child_of_a_parallel_job_lets_its_siblings_finish(scene: Scene) -> None:
    """Three children in parallel, each waiting on its permission at the parent's client: stopping
    one by its alias cancels its run alone (its child is aborted, its request withdrawn, it asks the
    model nothing more); once answered, its siblings complete.

    Covers: R10.3.52, R10.3.54, R10.3.56, R10.3.58, R10.3.60, R6.3.8, R6.3.10
    """
    await scene.start([tool_step("touch", {"path": "made.txt"}), text_step("child finished")])
    parent = await scene.parent("websocket", interactive=True)
    data = await parent.create("parallel", "left", "middle", "right")
    left, middle, right = data["runs"]
    asked = {r["agent_id"]: r for r in await parent.permission_requests(3)}
    stopped = await parent.ok("stop", handle="MIDDLE")  # aliases match case-insensitively
    assert stopped["cancelled"] == [
        {"run_id": middle["run_id"], "agent_id": middle["agent_id"], "state": "cancelled"}
    ]
    withdrawn = asked[middle["agent_id"]]["request_id"]
    await parent.client.until(
        lambda m: m.get("type") == "permission_resolved" and m["request_id"] == withdrawn
    )
    await parent.client.until(activity(middle["agent_id"], "idle"))
    for run in (left, right):
        await parent.answer(asked[run["agent_id"]])
    result = await parent.ok("wait", handles=[data["job_id"]])
    assert [r["state"] for r in result["runs"]] == ["completed", "cancelled", "completed"]
    assert [r.get("final_text") for r in result["runs"]] == ["child finished", None, "child finished"]
    assert result["aggregate_state"] == "mixed"
    assert len(requests_of(scene.home, "test", task("middle"))) == 1
    assert len(requests_of(scene.home, "test", task("left"))) == 2
    assert len(requests_of(scene.home, "test", task("right"))) == 2
    await scene.audit()

"""A leased child seen from its own dashboard, end to end (PROTOCOL §10.3 lease guard, §12.5): a
real daemon, a real child on a scripted model, a client attached to the child beside the parent's."""

from __future__ import annotations

from jobs.scenekit import MARKER, Scene, activity, requests_of, task
from shard.testing import text_step, tool_step

# what a connection attached to the parent alone may hear of the parent's child
ORCHESTRATOR = {
    "agent_spawned",
    "agent_status_changed",
    "agent_activity",
    "agent_exited",
    "subagent_run_changed",
}


async def test_a_leased_child_streams_to_its_dashboard_and_refuses_a_direct_prompt(scene: Scene) -> None:
    """While a child's run is active, its progress streams to a client attached to the child and
    not to the parent's; that client's direct prompt is refused (CONFLICT) and its abort cancels the
    run through the coordinator, recorded against the run.

    Covers: R10.3.68, R10.3.70, R12.5.8
    """
    await scene.start([tool_step("sleep", {"seconds": 120}), text_step("woke up")])
    parent = await scene.parent("unix", interactive=True)
    data = await parent.ok("create", name="miner", task=task("miner"))
    child = data["runs"][0]["agent_id"]
    await parent.until_run(data["runs"][0]["run_id"], "active")
    dashboard = await scene.dashboard(child)
    await parent.heard(activity(child, "tool"))
    refused, _ = await dashboard.request({"type": "prompt", "id": "p", "agent_id": child, "message": "more"})
    assert refused["success"] is False
    assert refused["error"]["code"] == "CONFLICT"
    aborted, _ = await dashboard.request({"type": "abort", "id": "a", "agent_id": child})
    assert aborted["success"] is True
    await dashboard.idle(agent_id=child)
    result = await parent.ok("wait", handles=["miner"])
    assert result["runs"][0]["state"] == "cancelled"
    assert result["runs"][0]["error"] == "aborted by a client"
    assert "final_text" not in result["runs"][0]
    heard = {m["type"] for m in parent.client.seen if m.get("agent_id") == child}
    assert heard <= ORCHESTRATOR, heard
    progress = {m["type"] for m in dashboard.seen if m.get("agent_id") == child}
    assert {"sync", "status", "turn_end"} <= progress
    assert MARKER in str(dashboard.seen)  # the child's own session: the task is its prompt
    assert len(requests_of(scene.home, "test")) == 1  # neither the prompt nor the abort asked the model
    await scene.audit()


async def test_a_queued_chain_steps_child_refuses_a_direct_prompt_and_steer(scene: Scene) -> None:
    """A chain of two whose first step sleeps in a tool: a dashboard attached to the second step's
    child (still queued) gets CONFLICT for a prompt and for a steer, and its abort cancels that
    step through the coordinator ("aborted by a client") while the first runs on; the second
    step's child never asks its model anything.

    Covers: R10.3.68, R10.3.70, R10.3.35
    """
    await scene.start([tool_step("sleep", {"seconds": 120}), text_step("woke up")])
    parent = await scene.parent("unix")
    data = await parent.create("chain", "sleeper", "after")
    sleeper, after = data["runs"]
    await parent.until_run(sleeper["run_id"], "active")
    await parent.heard(activity(sleeper["agent_id"], "tool"))
    dashboard = await scene.dashboard(after["agent_id"])
    to_child = {"agent_id": after["agent_id"]}
    prompt, _ = await dashboard.request({"type": "prompt", "id": "p", **to_child, "message": "now"})
    assert prompt["error"]["code"] == "CONFLICT", prompt
    steer, _ = await dashboard.request({"type": "steer", "id": "s", **to_child, "message": "now"})
    assert steer["error"]["code"] == "CONFLICT", steer
    aborted, _ = await dashboard.request({"type": "abort", "id": "a", **to_child})
    assert aborted["success"] is True, aborted
    status = await parent.ok("status", targets=[sleeper["run_id"], after["run_id"]])
    states = [(a["run"]["state"], a["run"].get("error")) for a in status["agents"]]
    assert states == [("active", None), ("cancelled", "aborted by a client")]
    await parent.ok("stop", handle=data["job_id"])
    assert requests_of(scene.home, "test", task("after")) == []
    assert len(requests_of(scene.home, "test")) == 1  # the sleeper's one request
    await scene.audit()

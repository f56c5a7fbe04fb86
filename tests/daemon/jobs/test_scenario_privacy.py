"""Where a background child's task text may not surface beyond the scenarios' audit (PROTOCOL §10.3:
task text is private — never in response data, events, AgentInfo, logs or list broadcasts)."""

from __future__ import annotations

from jobs.scenekit import MARKER, Scene, task
from shard.testing import text_step


async def test_a_session_listing_does_not_show_a_childs_task(scene: Scene) -> None:
    """A child completes its task; the parent's client lists the sessions of the parent's working
    directory (the child's too, since it inherits it): no entry quotes the task.

    Covers: R10.3.8
    """
    await scene.start([text_step("done")])
    parent = await scene.parent("unix", interactive=True)
    data = await parent.ok("create", name="scout", task=task("scout"))
    await parent.ok("wait", handles=[data["job_id"]])
    message = {"type": "session_op", "id": "list", "agent_id": parent.agent_id, "op": "list"}
    listed, _ = await parent.client.request(message)
    assert listed["success"] is True, listed
    assert MARKER not in str(listed["data"])

"""A wait that times out stops the waiting, never the work — seen from the parent's own model: a
real daemon, a parent whose scripted model launches a child and waits for it through its subagent
tools with a timeout shorter than the child's work (PROTOCOL §10.3 ``subagent.wait``). The tool's
connection closes after its answer, so the runs must also survive their waiter going away."""

from __future__ import annotations

import re
from typing import Any

from daemon_helpers import attach, create_agent

from jobs.scenekit import Scene, requests_of
from shard.testing import text_step, tool_step

LEAD = "lead"  # the parent's own scripted provider: plays its script once, no loop


async def test_a_wait_that_times_out_in_the_parents_tool_leaves_the_child_running(scene: Scene) -> None:
    """The parent's model calls subagent_wait with timeout 0.5 s on a child that sleeps 2 s: the
    tool answers that it timed out and the runs go on, with the run still starting or active; the child then
    completes with its answer.

    Covers: R10.3.26, R10.3.29, R10.3.24
    """
    lead = [
        tool_step("subagent_launch", {"name": "kid", "task": "sleep, then answer", "model": "test/m"}),
        tool_step("subagent_wait", {"handles": ["kid"], "timeout": 0.5}),
        text_step("left it running"),
    ]
    await scene.start([tool_step("sleep", {"seconds": 2}), text_step("kid done")], **{LEAD: lead})
    client = await scene.daemons[-1].unix()
    parent_id = await scene_parent(client, scene)
    await client.send({"type": "prompt", "id": "go", "agent_id": parent_id, "message": "delegate"})
    await client.until(lambda m: m["type"] == "turn_end" and m.get("agent_id") == parent_id)
    results = [m for m in client.seen if m["type"] == "tool_result" and m.get("agent_id") == parent_id]
    launched, waited = results
    assert launched["is_error"] is False, launched
    assert waited["is_error"] is False, waited
    assert "timed out waiting; the runs go on" in waited["content"]["text"]
    assert "kid" in waited["content"]["text"]
    # Still going: a loaded machine may not have started the child within the 0.5 s, so
    # "starting" is as good as "active" here; a cancelled or failed run is neither.
    assert re.search(r"- kid \(run-[0-9a-f]+\): (starting|active)$", waited["content"]["text"], re.M), waited

    message = {"type": "subagent.wait", "id": "w", "parent_agent_id": parent_id, "handles": ["kid"]}
    done, _ = await client.request(message)
    (run,) = done["data"]["runs"]
    assert (run["state"], run.get("final_text")) == ("completed", "kid done"), run
    assert len(requests_of(scene.home, "test")) == 2  # the child's two calls: sleep, then its answer


async def scene_parent(client: Any, scene: Scene) -> str:
    """A parent on the lead model, attached on ``client`` (its interactive responder)."""
    parent_id = await create_agent(client, scene.project, name="lead", model=f"{LEAD}/m")
    await attach(client, parent_id)
    scene.parents.append(parent_id)
    return parent_id

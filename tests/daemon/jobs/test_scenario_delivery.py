"""Completion reports, strict steers and agent definitions, end to end: a real daemon, real parent
and child runtimes on scripted models (PROTOCOL §10.3, §12.5)."""

from __future__ import annotations

import asyncio
from typing import Any

from jobs.scenekit import PARENT_PROVIDER, Scene, activity, requests_of, task
from shard.testing import text_step, tool_step


async def _runtime_state(parent: Any, agent_id: str) -> str:
    response, _ = await parent.client.request({"type": "agent.status", "id": "st", "agent_id": agent_id})
    return str(response["data"]["agents"][0]["runtime_state"])


async def _until(check: Any, what: str, seconds: float = 20.0) -> Any:
    for _ in range(int(seconds / 0.1)):
        found = await check() if asyncio.iscoroutinefunction(check) else check()
        if found:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"never: {what}")


async def test_a_completion_wakes_an_idle_reaped_parent_with_only_the_report(scene: Scene) -> None:
    """The parent's runtime is reaped while its child sleeps in a tool; when the child completes,
    the daemon restores the parent and its model gets one new user message: the report (run,
    state, final text) — none of the child's progress, not its task.

    Covers: R10.3.65, R10.3.67, R12.5.6
    """
    await scene.start(
        [tool_step("sleep", {"seconds": 3}), text_step("the child's result")],
        args=("--idle-runtime-timeout", "1"),
    )
    parent = await scene.parent("unix")
    data = await parent.ok("create", name="sleeper", task=task("sleeper"))
    (run,) = data["runs"]

    async def reaped() -> bool:
        return await _runtime_state(parent, parent.agent_id) == "stopped"

    await _until(reaped, "the idle parent's runtime was reaped")
    assert requests_of(scene.home, PARENT_PROVIDER) == []  # nothing asked of the parent's model yet
    woken = await _until(lambda: requests_of(scene.home, PARENT_PROVIDER), "the parent's model was asked")
    (request,) = woken
    (message,) = request["messages"]
    text = "".join(block.get("text", "") for block in message["content"])
    assert message["role"] == "user"
    assert "subagent_report" in text
    assert run["run_id"] in text
    assert 'state="completed"' in text
    assert "the child's result" in text
    assert task("sleeper") not in text
    assert "sleep" not in text.replace("sleeper", "")  # no trace of the child's tool call
    await scene.audit()


async def test_a_steer_lands_in_the_running_turn_and_one_into_a_failing_turn_conflicts(scene: Scene) -> None:
    """One child sleeps in a tool: a steer waits for the next provider boundary and is injected into
    that turn (its next model request holds it). Another child's only model call fails after a
    pause: a steer sent meanwhile is answered conflict, and it never reaches that child's model.

    Covers: R10.3.33, R10.3.34, R10.3.36, R10.3.37, R10.3.38, R10.3.39
    """
    failing = [{"blocks": [{"type": "pause", "ms": 2500}], "error": "the provider broke"}]
    await scene.start([tool_step("sleep", {"seconds": 1.5}), text_step("steered answer")], failing=failing)
    parent = await scene.parent("unix")
    good = (await parent.ok("create", name="good", task=task("good")))["runs"][0]
    await parent.heard(activity(good["agent_id"], "tool"))
    steer = await parent.ok("steer", target="good", message="STEER-ONE: also check the tests")
    assert steer["status"] == "injected"
    assert steer["run_id"] == good["run_id"]
    assert steer["turn_id"].startswith("turn-")
    assert steer["correlation_id"].startswith("steer-")
    done = await parent.ok("wait", handles=[good["run_id"]])
    assert done["runs"][0]["final_text"] == "steered answer"
    second = requests_of(scene.home, "test")[-1]
    assert "STEER-ONE" in str(second["messages"][-1])  # into the same turn, before its next call

    bad = (await parent.ok("create", name="bad", task=task("bad"), model="failing/m"))["runs"][0]
    await parent.until_run(bad["run_id"], "active")
    conflict = await parent.ok("steer", target=bad["run_id"], message="STEER-TWO: never delivered")
    assert conflict["status"] == "conflict"
    assert "turn_id" not in conflict
    failed = await parent.ok("wait", handles=[bad["run_id"]])
    assert failed["runs"][0]["state"] == "failed"
    assert "STEER-TWO" not in str(requests_of(scene.home, "failing"))
    late = await parent.ask("steer", target=bad["run_id"], message="too late")
    assert late["error"]["code"] == "CONFLICT"
    await scene.audit()


async def test_a_launch_by_a_definitions_name_configures_the_child(scene: Scene) -> None:
    """`.shard/agents/reviewer.md` in the project: a task named "Reviewer" gets the first name of its
    pool as alias, "reviewer · ada" as display name everywhere, the definition's mode, and its body
    in the child's system prompt — which never reaches a client.

    Covers: R10.3.20, R10.3.62, R11.0.21, R11.0.22
    """
    folder = scene.project / ".shard" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(
        "---\ndescription: Reviews a change\nmode: plan\nnames: [ada, grace]\n---\n"
        "You are REVIEWER-PROMPT-7: report problems, most serious first.\n"
    )
    await scene.start([text_step("looks fine")])
    parent = await scene.parent("unix")
    data = await parent.ok("create", name="Reviewer", task=task("review"))
    (run,) = data["runs"]
    assert (run["alias"], run["definition_name"], run["display_name"]) == (
        "ada",
        "reviewer",
        "reviewer · ada",
    )
    done = await parent.ok("wait", handles=[run["run_id"]])
    assert done["runs"][0]["display_name"] == "reviewer · ada"
    listed, _ = await parent.client.request({"type": "agent.status", "id": "s", "agent_id": run["agent_id"]})
    info = listed["data"]["agents"][0]
    assert (info["display_name"], info["mode"]) == ("reviewer · ada", "plan")
    (request,) = requests_of(scene.home, "test")
    assert "REVIEWER-PROMPT-7" in request["system"]
    assert "REVIEWER-PROMPT-7" not in str(parent.client.seen)
    await scene.audit()

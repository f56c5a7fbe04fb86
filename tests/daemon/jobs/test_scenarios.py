"""Background subagents end to end (issue 14's "Shows"): a real ``shard daemon``, its real ``shard
agent --stdio`` children on scripted models, the protocol over the unix socket and the WebSocket
(PROTOCOL §10.3, §11.2, §12.5). Every scenario ends with :meth:`Scene.audit`: the task text is in
no file, log, message or AgentInfo but the private ones, and ``final_text`` only on the owning
parent's connections."""

from __future__ import annotations

from jobs.scenekit import MARKER, Scene, requests_of, run_changes, task
from shard.testing import text_step, tool_step

GATED = [tool_step("touch", {"path": "made.txt"}), text_step("child finished")]  # asks before it writes


async def test_three_children_in_parallel_and_a_wait_for_all(scene: Scene) -> None:
    """A parent launches three children in parallel; each asks its permission at the parent's
    client, answered last child first, so they complete in reverse order; a wait for ``all`` on the
    job returns three completed runs with their final texts in the job's order. Another parent's
    client can neither see nor wait on the job. The audit then finds the tasks in no file, log line,
    message or AgentInfo but the private ones, and final texts only on this parent's connections.

    Covers: R10.3.2, R10.3.7, R10.3.8, R10.3.9, R10.3.10, R10.3.11, R10.3.19, R10.3.20, R10.3.23,
    R10.3.30, R10.3.61, R10.3.62, R10.3.63, R11.2.6, R11.2.7, R11.2.9, R12.5.1, R12.5.3, R12.5.4,
    R12.5.5
    """
    await scene.start(GATED)
    parent = await scene.parent("websocket", interactive=True)
    data = await parent.create("parallel", "alpha", "beta", "gamma")
    runs = data["runs"]
    assert [r["name"] for r in runs] == ["alpha", "beta", "gamma"]
    assert {r["state"] for r in runs} == {"queued"}  # answered before any child started
    asked = await parent.permission_requests(3)
    by_agent = {r["agent_id"]: r for r in asked}
    assert set(by_agent) == {r["agent_id"] for r in runs}
    for run in reversed(runs):
        await parent.answer(by_agent[run["agent_id"]])
        done = await parent.until_run(run["run_id"], "completed")
        assert done["agent_id"] == run["agent_id"]
        assert done["parent_agent_id"] == parent.agent_id
        assert "final_text" not in done
    result = await parent.ok("wait", handles=[data["job_id"]], mode="all")
    assert result["timed_out"] is False
    assert result["aggregate_state"] == "completed"
    assert [r["run_id"] for r in result["runs"]] == [r["run_id"] for r in runs]
    assert [r["state"] for r in result["runs"]] == ["completed"] * 3
    assert [r["final_text"] for r in result["runs"]] == ["child finished"] * 3
    ends = [r["ended_at"] for r in result["runs"]]
    assert ends == sorted(ends, reverse=True)  # gamma ended first, yet the runs come in job order
    for run in runs:
        assert run_changes(parent.client, run["run_id"])[-3:] == [
            ("queued", "starting"),
            ("starting", "active"),
            ("active", "completed"),
        ]
    other = await scene.parent("unix")
    assert (await other.ask("status", targets=[data["job_id"]]))["error"]["code"] == "NOT_FOUND"
    assert (await other.ask("wait", handles=["alpha"], timeout=0))["error"]["code"] == "NOT_FOUND"
    assert not [m for m in other.client.seen if m.get("type") == "subagent_run_changed"]
    assert "child finished" not in str(other.client.seen)
    await scene.audit()


async def test_a_chain_whose_first_step_fails_never_starts_the_second(scene: Scene) -> None:
    """A chain of two on a model whose script errors: step 1 fails, step 2 is cancelled without
    ever starting — its child's runtime was sent no prompt: the model was asked once, by step 1.

    Covers: R10.3.16, R10.3.61, R11.2.4, R11.2.6
    """
    await scene.start([text_step("unused")], broken=[{"blocks": [], "error": "the model is down"}])
    parent = await scene.parent("unix")
    data = await parent.create("chain", "first", "second", model="broken/m")
    _first, second = data["runs"]
    result = await parent.ok("wait", handles=[data["job_id"]])
    states = [r["state"] for r in result["runs"]]
    assert states == ["failed", "cancelled"], result
    assert "started_at" in result["runs"][0]
    assert "started_at" not in result["runs"][1]
    assert run_changes(parent.client, second["run_id"]) == [("queued", "cancelled")]
    assert len(requests_of(scene.home, "broken")) == 1
    assert len(requests_of(scene.home, "broken", task("first"))) == 1
    assert requests_of(scene.home, "broken", task("second")) == []
    assert requests_of(scene.home, "test") == []
    status = await parent.ok("status", targets=[second["agent_id"]])
    assert status["agents"][0]["run"]["state"] == "cancelled"
    await scene.audit()


async def test_a_childs_permission_request_is_answered_at_the_root(scene: Scene) -> None:
    """A child's write asks for permission; the only interactive client is attached to the parent
    (never to the child): the request reaches it carrying the child's agent_id, and its answer lets
    the child write and its run complete.

    Covers: R6.3.8, R6.3.9, R6.3.10, R10.3.69, R12.5.9
    """
    await scene.start(GATED)
    parent = await scene.parent("unix", interactive=True)
    data = await parent.ok("create", name="writer", task=task("writer"))
    child = data["runs"][0]["agent_id"]
    await parent.until_run(data["runs"][0]["run_id"], "active")
    (request,) = await parent.permission_requests(1)
    assert request["agent_id"] == child != parent.agent_id
    assert not (scene.project / "made.txt").exists()
    await parent.answer(request)
    resolved = (await parent.client.until_type("permission_resolved"))[-1]
    assert resolved["agent_id"] == child
    assert resolved["decision"] == "allow"
    result = await parent.ok("wait", handles=["writer"])
    assert result["runs"][0]["state"] == "completed"
    assert result["runs"][0]["final_text"] == "child finished"
    assert (scene.project / "made.txt").exists()
    assert MARKER in str(requests_of(scene.home, "test", task("writer"))[0]["messages"])
    await scene.audit()

"""A child's history across runs and across a daemon's death, end to end (PROTOCOL §10.3
``subagent.relaunch`` and restart rules): a real daemon, real children on scripted models."""

from __future__ import annotations

from jobs.scenekit import Scene, activity, child_runtime_pids, requests_of, run_changes, task
from shard.testing import text_step, tool_step


async def test_relaunching_a_finished_child_keeps_its_history(scene: Scene) -> None:
    """A child completes its task; relaunched with a new one it gets a new job and run but keeps its
    agent_id and alias, and its second run's model request holds the first task's conversation.

    Covers: R10.3.40, R10.3.43, R10.3.44, R10.3.45, R10.3.46, R10.3.47, R11.2.1
    """
    await scene.start([text_step("first answer"), text_step("second answer")])
    parent = await scene.parent("unix")
    first = await parent.ok("create", name="scout", task=task("scout"))
    (run,) = first["runs"]
    done = await parent.ok("wait", handles=[run["run_id"]])
    assert done["runs"][0]["final_text"] == "first answer"
    again = await parent.ok("relaunch", target="scout", task=task("scout, again"))
    assert again["state"] == "queued"
    assert again["agent_id"] == run["agent_id"]
    assert again["alias"] == run["alias"]
    assert again["job_id"] != first["job_id"]
    assert again["run_id"] != run["run_id"]
    assert again["job_id"].startswith("job-")
    assert again["run_id"].startswith("run-")
    result = await parent.ok("wait", handles=[again["run_id"]])
    assert result["runs"][0]["state"] == "completed"
    assert result["runs"][0]["final_text"] == "second answer"
    requests = requests_of(scene.home, "test")
    assert len(requests) == 2
    second = str(requests[1]["messages"])
    assert task("scout") in second  # the first task, its answer and the new task, in order
    assert second.index(task("scout")) < second.index("first answer") < second.index(task("scout, again"))
    assert task("scout, again") not in str(requests[0]["messages"])
    await scene.audit()


async def test_a_daemon_killed_mid_chain_interrupts_and_replays_nothing(scene: Scene) -> None:
    """kill -9 of the daemon while a chain's first step sleeps in a tool: the next daemon reports the
    step interrupted and the next one cancelled — in status and in wait — and starts nothing again:
    no child is running and the model was asked nothing more. The parent may then relaunch the
    interrupted child, which goes on from its durable session.

    Covers: R10.3.72, R10.3.75, R10.3.76, R10.3.77, R11.2.10, R11.2.11
    """
    await scene.start([tool_step("sleep", {"seconds": 120}), text_step("woke up")])
    parent = await scene.parent("unix")
    data = await parent.create("chain", "digger", "filler")
    digger, filler = data["runs"]
    await parent.until_run(digger["run_id"], "active")
    await parent.heard(activity(digger["agent_id"], "tool"))
    assert len(requests_of(scene.home, "test")) == 1
    await scene.kill9()
    await scene.start()
    again = await scene.parent("websocket", agent_id=parent.agent_id)
    status = await again.ok("status", targets=[data["job_id"]])
    runs = {a["agent_id"]: a["run"] for a in status["agents"]}
    assert runs[digger["agent_id"]]["state"] == "interrupted"
    assert runs[digger["agent_id"]]["error"] == "the daemon restarted"
    assert runs[filler["agent_id"]]["state"] == "cancelled"
    waited = await again.ok("wait", handles=[data["job_id"]])
    assert waited["timed_out"] is False
    assert [r["state"] for r in waited["runs"]] == ["interrupted", "cancelled"]
    assert "started_at" not in waited["runs"][1]
    listed = await again.ok("status")
    assert listed["jobs"][0]["state"] == "failed"
    assert run_changes(again.client, digger["run_id"]) == []  # settled before anyone asked
    stop = await again.ok("stop", handle=data["job_id"])  # terminal: nothing to cancel
    assert stop["cancelled"] == []
    assert len(requests_of(scene.home, "test")) == 1  # nothing replayed
    assert child_runtime_pids(scene.home) == []  # the parent alone was woken, to hear of it
    again_run = await again.ok("relaunch", target="digger", task=task("digger, again"))  # explicitly
    result = await again.ok("wait", handles=[again_run["run_id"]])
    assert result["runs"][0]["state"] == "completed"
    assert result["runs"][0]["final_text"] == "woke up"
    requests = requests_of(scene.home, "test")
    assert len(requests) == 2
    assert task("digger") in str(requests[1]["messages"])  # on its durable session
    assert requests_of(scene.home, "test", task("filler")) == []
    await scene.audit()


async def test_a_daemon_stopped_gracefully_mid_chain_interrupts_and_starts_nothing(scene: Scene) -> None:
    """SIGTERM (a graceful stop) of the daemon while a chain's first step sleeps in a tool: its
    runtime is stopped with it, which cuts the turn short — the step did not complete and the next
    one must not start while the daemon goes down. The next daemon reports the step interrupted and
    the next one cancelled, never started.

    Covers: R10.3.75, R10.3.76, R11.2.10
    """
    await scene.start([tool_step("sleep", {"seconds": 120}), text_step("woke up")])
    parent = await scene.parent("unix")
    data = await parent.create("chain", "digger", "filler")
    digger, filler = data["runs"]
    await parent.heard(activity(digger["agent_id"], "tool"))
    await scene.daemons[-1].stop()
    await scene.start()
    again = await scene.parent("unix", agent_id=parent.agent_id)
    waited = await again.ok("wait", handles=[data["job_id"]])
    assert [(r["state"], r.get("error")) for r in waited["runs"]] == [
        ("interrupted", "the daemon restarted"),
        ("cancelled", "a later step of an interrupted chain"),
    ]
    assert "started_at" not in waited["runs"][1]
    assert run_changes(parent.client, filler["run_id"]) == []
    assert requests_of(scene.home, "test", task("filler")) == []
    await scene.audit()

"""The jobs department (coordinator, delivery, waits, steering) on its own, against a fake desk
(``fake_desk.py``): what it asks of the desk, with no broker behind it. The same flows through the
whole broker are the other tests of this folder."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from fake_desk import FakeDesk

from shard.daemon.effects import Client, Send, StartTimer
from shard.daemon.jobs.coordinator import Coordinator
from shard.daemon.jobs.timers import Deadline, Report, WaitEnd
from shard.daemon.record import AgentRecord
from shard.daemon.supervisor import Reap
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError

TASK = "look around"


def _setup() -> tuple[FakeDesk, Coordinator, Client]:
    desk = FakeDesk()
    parent = AgentRecord(agent_id="parent", session_id="sess-parent", cwd="/project")
    desk.manifests.add(parent)
    desk.admit(parent)
    desk.admitted.clear()
    return desk, Coordinator(desk, desk.manifests), Client(1, "unix")


def _launch(desk: FakeDesk, coordinator: Coordinator, client: Client) -> dict[str, Any]:
    """One run, started and accepted by its child's runtime: the run's handle."""
    coordinator.handle(client, cmd.SubagentCreate(id="c1", parent_agent_id="parent", name="scout", task=TASK))
    desk.run_started()
    [asked] = desk.asked
    assert isinstance(asked.command, cmd.Prompt)
    assert asked.command.message == TASK
    asked.answer(True)
    desk.asked.clear()
    created = desk.replies(client)[0]["data"]
    return {"job_id": created["job_id"], **created["runs"][0]}


def _states(desk: FakeDesk) -> list[str]:
    """The run's states as told to the parent's connections."""
    told = [orjson.loads(e.data) for e in desk.effects if isinstance(e, Send)]
    return [m["state"] for m in told if m["type"] == "subagent_run_changed"]


def test_create_commits_the_job_then_admits_each_child_once_and_hands_it_a_typed_task():
    desk, coordinator, client = _setup()
    handle = _launch(desk, coordinator, client)
    assert [s.agent_id for s in desk.admitted] == [handle["agent_id"]]
    assert list(desk.manifests.jobs) == [handle["job_id"]], "committed before the child was admitted"
    assert _states(desk) == ["starting", "active"]


def test_a_child_that_exits_mid_run_fails_it_and_the_report_goes_to_the_parent_as_a_steer():
    desk, coordinator, client = _setup()
    handle = _launch(desk, coordinator, client)
    coordinator.child_exited(handle["agent_id"])
    assert _states(desk)[-1] == "failed"
    assert StartTimer(Report("parent"), 0.0) in desk.effects
    coordinator.timer(Report("parent"))
    desk.run_started()
    [report] = desk.asked
    assert report.slot.agent_id == "parent"
    assert isinstance(report.command, cmd.Prompt)
    assert report.command.streaming_behavior == "steer"
    report.answer(True)
    assert desk.manifests.jobs[handle["job_id"]].runs[0].reported


def test_a_run_past_its_deadline_times_out_and_other_timers_are_not_the_coordinators():
    desk, coordinator, client = _setup()
    coordinator.run_timeout = 30.0
    handle = _launch(desk, coordinator, client)
    deadline = next(e for e in desk.effects if isinstance(e, StartTimer) and isinstance(e.key, Deadline))
    before = len(desk.effects)
    coordinator.timer(Reap(handle["agent_id"]))  # the supervisor's: nothing here
    assert len(desk.effects) == before
    coordinator.timer(deadline.key)
    assert _states(desk)[-1] == "timed_out"


def test_a_wait_holds_its_connection_until_its_timeout_ends_the_waiting_not_the_work():
    desk, coordinator, client = _setup()
    handle = _launch(desk, coordinator, client)
    coordinator.handle(
        client, cmd.SubagentWait(id="w1", parent_agent_id="parent", handles=[handle["run_id"]], timeout=5)
    )
    assert client.waiting
    timer = next(e for e in desk.effects if isinstance(e, StartTimer) and isinstance(e.key, WaitEnd))
    coordinator.timer(timer.key)
    assert not client.waiting
    assert desk.replies(client)[-1]["data"]["timed_out"] is True
    assert _states(desk)[-1] == "active"


def test_a_steer_is_a_typed_runtime_steer_answered_when_the_runtime_has():
    desk, coordinator, client = _setup()
    handle = _launch(desk, coordinator, client)
    steer = cmd.SubagentSteer(
        id="s1", parent_agent_id="parent", target=handle["run_id"], message="also tests"
    )
    coordinator.handle(client, steer)
    [asked] = desk.asked
    assert isinstance(asked.command, cmd.RuntimeSteer)
    assert asked.command.message == "also tests"
    assert [m.get("id") for m in desk.replies(client)] == ["c1"], "answered once the runtime has"
    asked.answer(True, status="injected", turn_id="turn-1")
    assert desk.replies(client)[-1]["data"]["status"] == "injected"


def test_the_lease_guard_refuses_a_direct_prompt_to_a_child_with_a_live_run():
    desk, coordinator, client = _setup()
    handle = _launch(desk, coordinator, client)
    child = desk.slot(handle["agent_id"])
    with pytest.raises(ShardError) as refused:
        coordinator.guard(client, child, cmd.Prompt(message="hi", agent_id=child.agent_id))
    assert refused.value.code == ErrorCode.CONFLICT
    assert coordinator.guard(client, desk.slot("parent"), cmd.Prompt(message="hi")) is False

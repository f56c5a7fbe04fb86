"""Strict active steer in process: ``subagent.steer`` and a person's steer to a leased child, both
bound to the run's current turn through the child's ``runtime.steer`` (PROTOCOL §10.3)."""

from __future__ import annotations

import pytest

from jobs.jobkit import batch, command, create, finish, parent
from shard.testing.broker import BrokerHarness, FakeRuntime


def _active(harness: BrokerHarness) -> tuple:
    client, parent_id = parent(harness)
    run = create(client, parent_id)["data"]["runs"][0]
    child = harness.runtime(run["agent_id"])
    child.emit({"type": "status", "status": "streaming"})
    return client, parent_id, run, child


def _steer(client, parent_id: str, target: str, message: str = "focus on the tests") -> str:
    """Send subagent.steer; its id (the answer may come later)."""
    client._ids += 1
    msg_id = f"steer-{client._ids}"
    client.send(
        {
            "type": "subagent.steer",
            "id": msg_id,
            "parent_agent_id": parent_id,
            "target": target,
            "message": message,
        }
    )
    return msg_id


def _answer_steer(child: FakeRuntime, data: dict) -> dict:
    (asked,) = [c for c in child.got("runtime.steer") if not c.get("answered")]
    asked["answered"] = True
    child.respond(asked, data)
    return asked


@pytest.mark.parametrize("by", ["run_id", "agent_id", "alias"])
def test_a_steer_to_an_active_run_is_injected_into_its_turn(harness, by):
    """The target may be the run, the child or its alias; the child's runtime gets runtime.steer
    with the message, and the answer, once the runtime injected it, says injected with the turn's
    id, the run and a correlation id.

    Covers: R10.3.33, R10.3.34, R10.3.36, R10.3.39
    """
    client, parent_id, run, child = _active(harness)
    msg_id = _steer(client, parent_id, run[by])
    assert [m for m in client.received if m.get("id") == msg_id] == []  # not before the runtime says
    asked = _answer_steer(child, {"status": "injected", "turn_id": "turn-7"})
    assert asked["message"] == "focus on the tests"
    data = client.response(msg_id)["data"]
    assert data["status"] == "injected"
    assert data["turn_id"] == "turn-7"
    assert data["run_id"] == run["run_id"]
    assert data["correlation_id"].startswith("steer-")


def test_a_steer_whose_turn_ended_first_is_a_conflict_and_never_a_later_prompt(harness):
    """The runtime answers conflict (the turn ended before the next provider boundary): so does
    subagent.steer, and the daemon keeps nothing to send later — no prompt, no follow-up; a
    relaunch's task is the only thing the child then gets.

    Covers: R10.3.37, R10.3.38, R10.3.39
    """
    client, parent_id, run, child = _active(harness)
    msg_id = _steer(client, parent_id, run["alias"], "STEER-WORDS")
    _answer_steer(child, {"status": "conflict"})
    data = client.response(msg_id)["data"]
    assert data["status"] == "conflict"
    assert "turn_id" not in data
    finish(harness, run["agent_id"])
    assert command(client, "relaunch", parent_id, target=run["alias"], task="next task")["success"]
    prompts = [
        c["message"] for r in harness.runtimes if r.gen.agent_id == run["agent_id"] for c in r.got("prompt")
    ]
    assert all("STEER-WORDS" not in p for p in prompts)


def test_a_runtime_gone_before_answering_makes_the_steer_a_conflict(harness):
    """Covers: R10.3.37"""
    client, parent_id, run, child = _active(harness)
    msg_id = _steer(client, parent_id, run["run_id"])
    child.exit(1, "crash")
    assert client.response(msg_id)["data"]["status"] == "conflict"


def test_queued_terminal_unknown_foreign_and_job_targets_are_refused(harness):
    """A queued run (a chain's second step) and a terminal one are CONFLICT; an unknown handle and
    another parent's child NOT_FOUND; a job id is no steer target. Nothing reaches a runtime.

    Covers: R10.3.35, R10.3.34
    """
    client, parent_id = parent(harness)
    job = batch(client, parent_id, "chain", "one", "two")
    first, second = job["runs"]
    other_client, other_parent = parent(harness)
    foreign = create(other_client, other_parent, name="theirs")["data"]["runs"][0]
    harness.runtime(first["agent_id"]).emit({"type": "status", "status": "streaming"})
    answers = {
        "queued": command(client, "steer", parent_id, target=second["run_id"], message="m"),
        "unknown": command(client, "steer", parent_id, target="nobody", message="m"),
        "foreign": command(client, "steer", parent_id, target=foreign["agent_id"], message="m"),
        "job": command(client, "steer", parent_id, target=job["job_id"], message="m"),
    }
    finish(harness, first["agent_id"])
    answers["terminal"] = command(client, "steer", parent_id, target=first["run_id"], message="m")
    codes = {k: (v["success"], v.get("error", {}).get("code")) for k, v in answers.items()}
    assert codes == {
        "queued": (False, "CONFLICT"),
        "unknown": (False, "NOT_FOUND"),
        "foreign": (False, "NOT_FOUND"),
        "job": (False, "INVALID_REQUEST"),
        "terminal": (False, "CONFLICT"),
    }
    assert [c for r in harness.runtimes for c in r.got("runtime.steer")] == []


def test_a_run_still_starting_cannot_be_steered(harness):
    """Until the child accepted its task the run is not active.

    Covers: R10.3.34, R10.3.35
    """
    client, parent_id = parent(harness)
    harness.auto_ready = False
    run = create(client, parent_id)["data"]["runs"][0]
    answer = command(client, "steer", parent_id, target=run["run_id"], message="m")
    assert answer["error"]["code"] == "CONFLICT"


def test_a_persons_steer_to_a_leased_child_takes_the_strict_path(harness):
    """A client attached to the child steers it: the daemon sends runtime.steer (never an ordinary
    steer that could outlive the turn); injected → success, conflict → CONFLICT.

    Covers: R10.3.70, R10.3.38
    """
    _, _, run, child = _active(harness)
    person = harness.connect()
    person.attach(run["agent_id"])
    person.send({"type": "steer", "id": "s1", "agent_id": run["agent_id"], "message": "hurry"})
    _answer_steer(child, {"status": "injected", "turn_id": "turn-1"})
    assert person.response("s1")["success"] is True
    person.send({"type": "steer", "id": "s2", "agent_id": run["agent_id"], "message": "late"})
    _answer_steer(child, {"status": "conflict"})
    assert person.response("s2")["error"]["code"] == "CONFLICT"
    assert child.got("steer") == []
    images = [{"type": "image", "data": "aGk=", "mime_type": "image/png"}]
    answer = person.request(
        {"type": "steer", "agent_id": run["agent_id"], "message": "see", "images": images}
    )
    assert answer["error"]["code"] == "INVALID_REQUEST"

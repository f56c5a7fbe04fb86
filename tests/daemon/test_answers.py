"""The pure checks behind first-answer-wins and delegation (shard.daemon.answers), without a broker."""

from __future__ import annotations

import pytest

from shard.daemon.answers import ancestors, answerers, open_request_answered
from shard.daemon.effects import Client
from shard.daemon.record import AgentRecord
from shard.daemon.slot import AgentSlot, OpenRequest
from shard.protocol.commands import PermissionResponse, UiResponse
from shard.protocol.errors import ErrorCode, ShardError

PERMISSION = {
    "type": "permission_request",
    "request_id": "r1",
    "choices": [{"id": "allow_once"}, {"id": "deny"}],
}
CONFIRM = {"type": "ui_request", "request_id": "u1", "kind": "confirm"}


def _slot(agent_id: str, parent: str | None = None) -> AgentSlot:
    return AgentSlot(
        AgentRecord(agent_id=agent_id, session_id="s-" + agent_id, cwd="/w", parent_agent_id=parent)
    )


def _family() -> dict[str, AgentSlot]:
    return {s.agent_id: s for s in (_slot("a"), _slot("b", "a"), _slot("c", "b"))}


def test_ancestors_nearest_first_and_a_cycle_ends_the_walk():
    agents = _family()
    assert [s.agent_id for s in ancestors(agents, agents["c"])] == ["b", "a"]
    agents["a"].record.parent_agent_id = "c"  # a corrupt registry: a -> c -> b -> a
    assert [s.agent_id for s in ancestors(agents, agents["c"])] == ["b", "a"]


def test_answerers_are_own_interactive_clients_else_the_nearest_ancestors():
    """Covers: R6.3.12"""
    agents = _family()
    top, middle, watcher = Client(1, "unix"), Client(2, "unix"), Client(3, "unix")
    agents["a"].attach(top, "interactive")
    agents["c"].attach(watcher, "observer")
    assert answerers(agents, agents["c"]) == ([top], True)
    agents["b"].attach(middle, "interactive")
    assert answerers(agents, agents["c"]) == ([middle], True)
    agents["c"].attach(watcher, "interactive")
    assert answerers(agents, agents["c"]) == ([watcher], False)
    watcher.closed = True  # a closed connection answers nothing
    assert answerers(agents, agents["c"]) == ([middle], True)


def _open(slot: AgentSlot, event: dict) -> OpenRequest:
    entry = OpenRequest(b"", event)
    slot.open_requests[event["request_id"]] = entry
    return entry


def test_an_answer_that_fits_names_its_request_and_a_late_one_names_none():
    slot = _slot("a")
    client = Client(1, "unix")
    slot.attach(client, "interactive")
    entry = _open(slot, PERMISSION)
    answer = PermissionResponse(id="x", request_id="r1", choice_id="allow_once")
    assert open_request_answered(client, slot, answer) is entry
    entry.answered = True
    assert open_request_answered(client, slot, answer) is None
    unknown = PermissionResponse(id="y", request_id="nope", choice_id="allow_once")
    assert open_request_answered(client, slot, unknown) is None


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (PermissionResponse(id="x", request_id="r1", choice_id="allow_always"), ErrorCode.INVALID_REQUEST),
        (UiResponse(id="x", request_id="r1", value="yes"), ErrorCode.INVALID_REQUEST),
        (PermissionResponse(id="x", request_id="u1", choice_id="deny"), ErrorCode.INVALID_REQUEST),
        (UiResponse(id="x", request_id="u1", value="maybe"), ErrorCode.INVALID_REQUEST),
    ],
)
def test_an_answer_that_does_not_fit_is_refused_and_the_request_stays_open(answer, code):
    slot = _slot("a")
    client = Client(1, "unix")
    slot.attach(client, "interactive")
    _open(slot, PERMISSION)
    _open(slot, CONFIRM)
    with pytest.raises(ShardError) as caught:
        open_request_answered(client, slot, answer)
    assert caught.value.code == code
    assert not any(e.answered for e in slot.open_requests.values())


def test_observers_and_strangers_cannot_answer_but_a_delegated_ancestor_client_can():
    """Covers: R6.3.12"""
    slot = _slot("a")
    observer, stranger, delegate = Client(1, "unix"), Client(2, "unix"), Client(3, "unix")
    slot.attach(observer, "observer")
    entry = _open(slot, PERMISSION)
    entry.delegated_to.add(delegate)
    answer = PermissionResponse(id="x", request_id="r1", choice_id="deny")
    for who, code in ((observer, ErrorCode.PERMISSION_DENIED), (stranger, ErrorCode.NOT_ATTACHED)):
        with pytest.raises(ShardError) as caught:
            open_request_answered(who, slot, answer)
        assert caught.value.code == code
    assert open_request_answered(delegate, slot, answer) is entry

"""RequestBoard: open requests, first valid answer wins, each resolved exactly once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from shard.agent.permissions.board import InvalidAnswer, PermissionAnswer, RequestBoard
from shard.protocol.commands import PermissionResponse, UiResponse
from shard.protocol.events import EventBase, PermissionRequest, PermissionResolved, UiRequest, UiResolved
from shard.protocol.permissions import PermissionChoice


class Recorder:
    def __init__(self) -> None:
        self.events: list[EventBase] = []

    def __call__(self, event: EventBase) -> None:
        self.events.append(event)

    def resolved(self) -> list[EventBase]:
        return [e for e in self.events if isinstance(e, PermissionResolved | UiResolved)]


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def board(rec: Recorder) -> RequestBoard:
    return RequestBoard(rec)


def perm(
    request_id: str = "req-1", choices: tuple[str, ...] | None = ("allow", "always", "deny")
) -> PermissionRequest:
    fields: dict[str, Any] = {}
    if choices is not None:
        fields["choices"] = [
            PermissionChoice(id=c, label=c.title(), intent="deny" if c == "deny" else "allow")
            for c in choices
        ]
    return PermissionRequest(
        request_id=request_id,
        tool_name="bash",
        input={"command": "ls"},
        prompt="Run this command?",
        options=["allow", "allow_always", "deny"],
        **fields,
    )


def ui(request_id: str, kind: str, **fields: Any) -> UiRequest:
    return UiRequest(request_id=request_id, kind=kind, **fields)  # type: ignore[arg-type]


def choose(request_id: str, choice_id: str) -> PermissionResponse:
    return PermissionResponse(request_id=request_id, choice_id=choice_id)


def decide(request_id: str, decision: str) -> PermissionResponse:
    return PermissionResponse(request_id=request_id, decision=decision)  # type: ignore[arg-type]


# --- permission requests ------------------------------------------------------------------------


async def test_open_emits_the_request_and_waits(board: RequestBoard, rec: Recorder) -> None:
    """Opening broadcasts the permission_request itself and returns a pending future."""
    request = perm()
    future = board.open(request)
    assert rec.events == [request]
    assert not future.done()
    assert board.pending() == [request]


async def test_first_valid_choice_wins_and_is_resolved_once(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R6.3.3, R6.3.6, R5.1.8, R9.5.10, R9.5.13, R9.5.14. The first offered choice_id resolves
    the request: the waiter gets it, and exactly one permission_resolved with the same request_id, the
    choice form and the source is emitted."""
    future = board.open(perm())
    board.answer_permission(choose("req-1", "always"), source="web")
    assert future.done()
    assert future.result() == PermissionAnswer(choice_id="always", decision=None, source="web")
    assert rec.resolved() == [PermissionResolved(request_id="req-1", choice_id="always", source="web")]
    wire = rec.resolved()[0].to_wire()
    assert "decision" not in wire
    assert board.pending() == []


async def test_legacy_decision_resolves_in_decision_form(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R6.3.3, R6.3.6, R9.5.13. A legacy decision answer resolves with the decision form (no
    choice_id), carrying the source."""
    future = board.open(perm())
    board.answer_permission(decide("req-1", "allow_always"), source="tui")
    assert future.result() == PermissionAnswer(choice_id=None, decision="allow_always", source="tui")
    resolved = rec.resolved()
    assert resolved == [PermissionResolved(request_id="req-1", decision="allow_always", source="tui")]
    assert "choice_id" not in resolved[0].to_wire()


async def test_source_is_absent_when_unknown(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R9.5.14. source is optional: an answer without one resolves without the field."""
    board.open(perm())
    board.answer_permission(decide("req-1", "deny"))
    assert "source" not in rec.resolved()[0].to_wire()


async def test_second_answer_is_dropped_silently(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R6.3.3, R6.3.5. After the winner, another answer (valid or not, either form) raises
    nothing, emits nothing and does not change the result."""
    future = board.open(perm())
    board.answer_permission(choose("req-1", "deny"), source="a")
    before = list(rec.events)
    board.answer_permission(choose("req-1", "allow"), source="b")
    board.answer_permission(decide("req-1", "allow"), source="b")
    board.answer_permission(choose("req-1", "no-such-choice"), source="b")
    assert rec.events == before
    assert future.result() == PermissionAnswer("deny", None, "a")


async def test_answer_for_an_unknown_request_is_dropped(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R6.3.5. An answer naming no open request (made up, or for a UI request) is dropped
    silently and leaves open requests alone."""
    future = board.open(perm())
    board.open(ui("req-ui", "confirm"))
    count = len(rec.events)
    board.answer_permission(choose("req-unknown", "allow"))
    board.answer_permission(choose("req-ui", "allow"))
    board.answer_ui(UiResponse(request_id="req-1", value="yes"))
    board.answer_ui(UiResponse(request_id="req-nope", value="yes"))
    assert len(rec.events) == count
    assert not future.done()
    assert [r.request_id for r in board.pending()] == ["req-1", "req-ui"]


async def test_unknown_choice_is_refused_and_the_request_stays_open(
    board: RequestBoard, rec: Recorder
) -> None:
    """Covers: R9.5.10, R9.5.11, R9.5.12. A choice_id the request does not offer raises InvalidAnswer,
    emits nothing and leaves the request (and the future the gate waits on) open; a later valid answer
    still wins."""
    future = board.open(perm())
    count = len(rec.events)
    with pytest.raises(InvalidAnswer, match="always-like"):
        board.answer_permission(choose("req-1", "always-like"), source="a")
    assert len(rec.events) == count
    assert not future.done()
    assert [r.request_id for r in board.pending()] == ["req-1"]
    board.answer_permission(choose("req-1", "allow"), source="b")
    assert future.result() == PermissionAnswer("allow", None, "b")
    assert rec.resolved() == [PermissionResolved(request_id="req-1", choice_id="allow", source="b")]


async def test_choice_for_a_request_without_choices_is_refused(board: RequestBoard) -> None:
    """Covers: R9.5.10, R9.5.11. A request offering no choices accepts no choice_id; it stays open."""
    future = board.open(perm(choices=None))
    with pytest.raises(InvalidAnswer):
        board.answer_permission(choose("req-1", "allow"))
    assert not future.done()
    board.answer_permission(decide("req-1", "allow"))
    assert future.result().decision == "allow"


async def test_policy_resolution_defaults_to_deny_and_happens_once(
    board: RequestBoard, rec: Recorder
) -> None:
    """Covers: R6.3.6. A resolution from the runtime (headless policy, timeout, abort) closes the request
    like a client answer; an answer without choice or decision reads as deny; resolving again does
    nothing."""
    future = board.open(perm())
    board.resolve_permission("req-1", PermissionAnswer(None, None, "headless"))
    board.resolve_permission("req-1", PermissionAnswer("allow", None, "late"))
    assert rec.resolved() == [PermissionResolved(request_id="req-1", decision="deny", source="headless")]
    assert future.result() == PermissionAnswer(None, None, "headless")


async def test_answer_after_the_waiter_was_cancelled_does_not_raise(
    board: RequestBoard, rec: Recorder
) -> None:
    """A request whose waiter went away (turn aborted) can still be closed by an answer without an
    exception; it is resolved once."""
    future = board.open(perm())
    future.cancel()
    board.answer_permission(choose("req-1", "allow"))
    assert len(rec.resolved()) == 1
    assert board.pending() == []


async def test_waiter_is_woken_by_the_answer(board: RequestBoard) -> None:
    """Covers: R6.3.3. A task awaiting the future gets the winning answer (the answer is forwarded)."""
    future = board.open(perm())
    waiter = asyncio.ensure_future(future)
    await asyncio.sleep(0)
    board.answer_permission(choose("req-1", "deny"), source="x")
    answer = await asyncio.wait_for(waiter, 5)
    assert answer == PermissionAnswer("deny", None, "x")


async def test_pending_lists_open_requests_oldest_first(board: RequestBoard) -> None:
    """pending() is what sync shows: open requests (both kinds), oldest first, resolved ones gone."""
    requests = [perm("req-a"), ui("req-b", "input"), perm("req-c"), ui("req-d", "confirm")]
    for r in requests:
        board.open(r)
    assert board.pending() == requests
    board.answer_permission(decide("req-c", "allow"))
    board.answer_ui(UiResponse(request_id="req-b", value="text"))
    assert board.pending() == [requests[0], requests[3]]
    board.open(perm("req-e"))
    assert [r.request_id for r in board.pending()] == ["req-a", "req-d", "req-e"]


# --- UI requests -------------------------------------------------------------------------------


async def test_ui_first_answer_wins_and_later_ones_are_dropped(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R6.3.4, R6.3.5, R6.3.7, R5.1.8. The first valid ui_response resolves the request with one
    ui_resolved carrying the request_id, value and source; later answers are dropped silently."""
    future = board.open(ui("req-u", "input", placeholder="name"))
    board.answer_ui(UiResponse(request_id="req-u", value="first"), source="web")
    board.answer_ui(UiResponse(request_id="req-u", value="second"), source="tui")
    assert future.result() == "first"
    resolved = rec.resolved()
    assert len(resolved) == 1
    assert resolved[0].to_wire() == {
        "type": "ui_resolved",
        "request_id": "req-u",
        "value": "first",
        "source": "web",
    }


@pytest.mark.parametrize(
    ("kind", "fields", "value", "expected"),
    [
        ("select", {"options": ["red", "green"]}, "green", "green"),
        ("select", {"options": ["red", "green"]}, ["red", "green"], ["red", "green"]),
        ("confirm", {}, "yes", "yes"),
        ("confirm", {}, "No", "no"),
        ("confirm", {}, "TRUE", "true"),
        ("input", {}, "", ""),
        ("input", {"prefill": "x"}, "typed text", "typed text"),
        ("editor", {}, "line 1\nline 2", "line 1\nline 2"),
    ],
)
async def test_ui_values_that_fit_the_kind_resolve(
    board: RequestBoard, rec: Recorder, kind: str, fields: dict[str, Any], value: Any, expected: Any
) -> None:
    """Covers: R6.3.4, R6.3.7. A value that fits the request kind resolves it (confirm normalised to
    lower case)."""
    future = board.open(ui("req-u", kind, **fields))
    board.answer_ui(UiResponse(request_id="req-u", value=value))
    assert future.result() == expected
    assert rec.resolved() == [UiResolved(request_id="req-u", value=expected)]


@pytest.mark.parametrize("kind", ["select", "confirm", "input", "editor", "notify"])
async def test_null_is_a_valid_answer_for_every_kind(board: RequestBoard, rec: Recorder, kind: str) -> None:
    """Covers: R6.3.4, R6.3.7. A null value (dismissed) always resolves, whatever the kind."""
    fields = {"options": ["a"]} if kind == "select" else {}
    future = board.open(ui("req-u", kind, **fields))
    board.answer_ui(UiResponse(request_id="req-u", value=None))
    assert future.done()
    assert future.result() is None
    assert rec.resolved() == [UiResolved(request_id="req-u", value=None)]


@pytest.mark.parametrize(
    ("kind", "fields", "value"),
    [
        ("select", {"options": ["red", "green"]}, "blue"),
        ("select", {"options": ["red", "green"]}, ["red", "blue"]),
        ("select", {"options": ["red", "green"]}, []),
        ("select", {}, "red"),
        ("confirm", {}, "maybe"),
        ("confirm", {}, ["yes"]),
        ("confirm", {}, ""),
        ("input", {}, ["a", "b"]),
        ("editor", {}, ["text"]),
        ("notify", {}, "ok"),
    ],
)
async def test_ui_values_that_do_not_fit_are_refused_and_the_request_stays_open(
    board: RequestBoard, rec: Recorder, kind: str, fields: dict[str, Any], value: Any
) -> None:
    """Covers: R6.3.4. A value that does not fit the kind raises InvalidAnswer, emits nothing and leaves
    the request open; a later valid (null) answer still resolves it."""
    future = board.open(ui("req-u", kind, **fields))
    count = len(rec.events)
    with pytest.raises(InvalidAnswer):
        board.answer_ui(UiResponse(request_id="req-u", value=value))
    assert len(rec.events) == count
    assert not future.done()
    assert [r.request_id for r in board.pending()] == ["req-u"]
    board.answer_ui(UiResponse(request_id="req-u", value=None))
    assert future.result() is None


async def test_ui_policy_resolution_happens_once(board: RequestBoard, rec: Recorder) -> None:
    """Covers: R6.3.7. resolve_ui (headless/timeout) emits one ui_resolved; a client answer after it
    is dropped silently."""
    future = board.open(ui("req-u", "confirm"))
    board.resolve_ui("req-u", None, source="headless")
    board.answer_ui(UiResponse(request_id="req-u", value="yes"))
    board.resolve_ui("req-u", "yes")
    assert future.result() is None
    assert [e.to_wire() for e in rec.resolved()] == [
        {"type": "ui_resolved", "request_id": "req-u", "value": None, "source": "headless"}
    ]

"""RequestBoard: open requests, first valid answer wins, each resolved exactly once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from shard.agent.permissions.board import InvalidAnswer, PermissionAnswer, RequestBoard, Responders
from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.sink import EventSink
from shard.protocol.agents import IllegalTransition
from shard.protocol.commands import PermissionResponse, UiResponse
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.events import (
    ErrorEvent,
    EventBase,
    PermissionRequest,
    PermissionResolved,
    Status,
    UiRequest,
    UiResolved,
)
from shard.protocol.headless import HEADLESS_POLICIES
from shard.protocol.permissions import PermissionChoice
from shard.testing import FakeClock


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
    return RequestBoard(EventSink(rec))


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
    expected = PermissionResolved(request_id="req-1", choice_id="always", source="web", intent="allow")
    assert rec.resolved() == [expected]
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
    expected = PermissionResolved(request_id="req-1", decision="allow_always", source="tui", intent="persist")
    assert resolved == [expected]
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
    expected = PermissionResolved(request_id="req-1", choice_id="allow", source="b", intent="allow")
    assert rec.resolved() == [expected]


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
    expected = PermissionResolved(request_id="req-1", decision="deny", source="headless", intent="deny")
    assert rec.resolved() == [expected]
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


async def test_answer_takes_the_source_the_daemon_names_or_client(board: RequestBoard, rec: Recorder) -> None:
    """answer() routes a command to its request: the daemon names who answered in an
    extra field ``source``; a direct client's answer is ``client``. An answer that does not fit is
    an INVALID_REQUEST (a ShardError the runtime sends back) and the request stays open."""
    first, second = board.open(perm("req-1")), board.open(ui("req-2", "select", options=["a", "b"]))
    board.answer(
        PermissionResponse.model_validate({"request_id": "req-1", "choice_id": "allow", "source": "unix-2"})
    )
    assert first.result() == PermissionAnswer("allow", None, "unix-2")
    with pytest.raises(ShardError) as info:
        board.answer(UiResponse(request_id="req-2", value="c"))
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert not second.done()
    board.answer(UiResponse(request_id="req-2", value="b"))
    assert second.result() == "b"
    assert [e.to_wire()["source"] for e in rec.resolved()] == ["unix-2", "client"]


# --- ask: the one wait (status, responders, headless policy, timeout, abort) ---------------------

TIMEOUT = 300.0
BOUND = 5.0  # real seconds: nothing here sleeps, so a wait this long means the code under test hung


class Asking:
    """A board with a fake clock, an agent mid-turn (status streaming) and every event recorded."""

    def __init__(self, policy: str = "deny", present: bool = True) -> None:
        self.events: list[EventBase] = []
        self.arrived = asyncio.Event()
        self.sink = EventSink(self._record)
        self.sink.set_status("streaming")
        self.clock = FakeClock()
        self.board = RequestBoard(
            self.sink,
            responders=Responders(present=present),
            headless=HeadlessPolicy(policy, TIMEOUT),
            clock=self.clock,
        )

    def _record(self, event: EventBase) -> None:
        self.events.append(event)
        self.arrived.set()

    def start(self, request: PermissionRequest | UiRequest) -> asyncio.Task[Any]:
        return asyncio.ensure_future(self.board.ask(request))

    async def until(self, kind: type[EventBase]) -> EventBase:
        async with asyncio.timeout(BOUND):
            while not any(isinstance(e, kind) for e in self.events):
                self.arrived.clear()
                await self.arrived.wait()
        return next(e for e in self.events if isinstance(e, kind))

    async def sleeping(self) -> None:
        """Until the board waits on the clock for the headless timeout."""
        async with asyncio.timeout(BOUND):
            await self.clock.until_sleeping()

    async def settled(self, task: asyncio.Task[Any]) -> Any:
        async with asyncio.timeout(BOUND):
            return await task

    def shown(self) -> list[str]:
        """The events as short strings: status moves, requests, resolutions and errors."""
        out = []
        for e in self.events:
            wire = e.to_wire()
            if isinstance(e, Status):
                out.append(f"status {wire['status']}")
            elif isinstance(e, PermissionResolved):
                out.append(f"resolved {wire.get('choice_id') or wire.get('decision')} {wire.get('source')}")
            elif isinstance(e, UiResolved):
                out.append(f"resolved {wire['value']} {wire.get('source')}")
            elif isinstance(e, ErrorEvent):
                out.append(f"error {wire['code']}")
            else:
                out.append(wire["type"])
        return out


def request_of(kind: str) -> PermissionRequest | UiRequest:
    return perm() if kind == "permission" else ui("req-1", "confirm")


def unanswered(kind: str) -> str:
    return "deny" if kind == "permission" else "None"


KINDS = ["permission", "ui"]


@pytest.mark.parametrize("kind", KINDS)
async def test_ask_waits_for_the_answer_with_the_status_around_it(kind: str) -> None:
    """Covers: R6.3.6, R6.3.7, R9.1.19. The waiting status goes out before the request, the first
    answer settles it, and the status returns to what it was; the asker gets the answer."""
    a = Asking()
    task = a.start(request_of(kind))
    await a.until(PermissionRequest if kind == "permission" else UiRequest)
    assert a.sink.status == f"waiting_for_{kind}"
    if kind == "permission":
        a.board.answer_permission(choose("req-1", "allow"), source="client")
        assert await a.settled(task) == PermissionAnswer("allow", None, "client")
    else:
        a.board.answer_ui(UiResponse(request_id="req-1", value="yes"), source="client")
        assert await a.settled(task) == "yes"
    assert a.shown() == [
        "status streaming",
        f"status waiting_for_{kind}",
        f"{kind}_request",
        f"resolved {'allow' if kind == 'permission' else 'yes'} client",
        "status streaming",
    ]
    assert a.board.pending() == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("policy", ["deny", "allow_if_rule_matches"])
async def test_asked_with_nobody_there_the_policy_settles_at_once(kind: str, policy: str) -> None:
    """Covers: R6.3.14, R6.3.15. Nobody can answer and the policy does not queue: denied (or
    dismissed, null) at once with source headless, no timer, no TIMEOUT error."""
    a = Asking(policy, present=False)
    answer = await a.settled(a.start(request_of(kind)))
    assert answer == (PermissionAnswer(None, "deny", "headless") if kind == "permission" else None)
    assert a.shown()[1:] == [
        f"status waiting_for_{kind}",
        f"{kind}_request",
        f"resolved {unanswered(kind)} headless",
        "status streaming",
    ]
    assert a.clock.sleepers == 0


@pytest.mark.parametrize("kind", KINDS)
async def test_queue_keeps_the_request_open_until_the_timeout_then_times_out(kind: str) -> None:
    """Covers: R6.4.24, R8.13. queue: the request stays open (pending) with nobody there; when the
    headless timeout passes, error TIMEOUT, then it is denied (or dismissed, null) with source
    timeout. UI requests follow the queue policy like permission requests."""
    a = Asking("queue", present=False)
    task = a.start(request_of(kind))
    await a.sleeping()
    assert a.clock.deadlines == [TIMEOUT]
    assert [r.request_id for r in a.board.pending()] == ["req-1"]
    a.clock.advance(TIMEOUT - 1)
    assert not task.done()
    a.clock.advance(1)
    answer = await a.settled(task)
    assert answer == (PermissionAnswer(None, "deny", "timeout") if kind == "permission" else None)
    assert a.shown()[1:] == [
        f"status waiting_for_{kind}",
        f"{kind}_request",
        "error TIMEOUT",
        f"resolved {unanswered(kind)} timeout",
        "status streaming",
    ]
    error = next(e for e in a.events if isinstance(e, ErrorEvent))
    assert error.fatal is False
    assert "req-1" in error.message
    assert "300 s" in error.message


@pytest.mark.parametrize("kind", KINDS)
async def test_queue_takes_an_answer_from_a_responder_that_arrives(kind: str) -> None:
    """Covers: R6.4.25. A queued request is answered by a client that attaches before the timeout;
    no TIMEOUT."""
    a = Asking("queue", present=False)
    task = a.start(request_of(kind))
    await a.sleeping()
    a.board.responders.arrive()
    if kind == "permission":
        a.board.answer_permission(decide("req-1", "allow"), source="unix-client-1")
        assert await a.settled(task) == PermissionAnswer(None, "allow", "unix-client-1")
    else:
        a.board.answer_ui(UiResponse(request_id="req-1", value="no"), source="unix-client-1")
        assert await a.settled(task) == "no"
    assert "error TIMEOUT" not in a.shown()
    assert a.clock.sleepers == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("policy", HEADLESS_POLICIES)
async def test_a_responder_that_may_come_back_is_waited_for_until_the_timeout(kind: str, policy: str) -> None:
    """Covers: R6.4.23, R6.4.24, R8.13. Asked with a responder there who then drops (a daemon client
    that may reconnect): the request stays open whatever the policy, until the headless timeout;
    then error TIMEOUT and deny (or null)."""
    a = Asking(policy)
    task = a.start(request_of(kind))
    await a.until(PermissionRequest if kind == "permission" else UiRequest)
    a.board.responders.leave(final=False)
    await a.sleeping()
    assert not task.done()
    a.clock.advance(TIMEOUT)
    await a.settled(task)
    assert a.shown()[-3:] == ["error TIMEOUT", f"resolved {unanswered(kind)} timeout", "status streaming"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_final_loss_settles_a_waiting_request_at_once(kind: str) -> None:
    """Asked with a responder there, then the last one is gone for good (end of stdin): the
    headless policy settles the waiting request at once."""
    a = Asking("deny")
    task = a.start(request_of(kind))
    await a.until(PermissionRequest if kind == "permission" else UiRequest)
    a.board.responders.leave(final=True)
    await a.settled(task)
    assert a.shown()[-2:] == [f"resolved {unanswered(kind)} headless", "status streaming"]
    assert a.clock.sleepers == 0


@pytest.mark.parametrize("kind", KINDS)
async def test_asked_after_a_responder_dropped_the_policy_settles_at_once(kind: str) -> None:
    """Covers: R6.3.14, R6.3.15. The last responder dropped and may come back (a daemon
    client): a request asked now has nobody to answer it, so deny settles it at once — only requests
    already waiting when the responder left wait for the timeout."""
    a = Asking("deny")
    a.board.responders.leave(final=False)
    answer = await a.settled(a.start(request_of(kind)))
    assert answer == (PermissionAnswer(None, "deny", "headless") if kind == "permission" else None)
    assert a.shown()[-2:] == [f"resolved {unanswered(kind)} headless", "status streaming"]
    assert a.clock.sleepers == 0


@pytest.mark.parametrize("kind", KINDS)
async def test_cancelling_the_asker_settles_the_request_as_aborted(kind: str) -> None:
    """Covers: R9.2.7. Abort (the waiting task cancelled) resolves the request with source abort,
    restores the status and lets the cancellation through."""
    a = Asking()
    task = a.start(request_of(kind))
    await a.until(PermissionRequest if kind == "permission" else UiRequest)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a.settled(task)
    assert a.shown()[-2:] == [f"resolved {unanswered(kind)} abort", "status streaming"]
    assert a.board.pending() == []


async def test_an_illegal_status_move_after_the_wait_raises() -> None:
    """The status is restored without swallowing errors: if the agent failed fatally while it
    waited, going back to streaming is an illegal move and it raises."""
    a = Asking()
    task = a.start(perm())
    await a.until(PermissionRequest)
    a.sink.fail(ShardError(ErrorCode.INTERNAL_ERROR, "disk full"))
    a.board.answer_permission(choose("req-1", "deny"))
    with pytest.raises(IllegalTransition, match="from error to streaming"):
        await a.settled(task)

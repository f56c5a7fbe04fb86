"""Open permission and UI requests: first valid answer wins, each is resolved exactly once
(PROTOCOL §6.3, §9.5) — and :meth:`RequestBoard.ask`, the one place the agent waits for a person.

The board emits ``permission_request``/``ui_request`` when a request opens and
``permission_resolved``/``ui_resolved`` when it closes, whoever closes it (a client, the headless
policy, a timeout, an abort). An answer that names no open request — late, or made up — is dropped
silently. An answer that does not fit the request (a ``choice_id`` it does not offer, a ``select``
value outside its options) is refused and the request stays open for another answer.

``ask`` owns everything around the wait, for both kinds alike: the status (``waiting_for_permission``
/ ``waiting_for_ui`` before the request goes out, back to what it was once it is settled — an
illegal move raises like any other), who can answer (:class:`Responders`), the headless policy and
its timeout (:class:`~shard.agent.permissions.headless.HeadlessPolicy`, ``error {TIMEOUT}`` when it
fires), and abort (cancelling the waiter settles the request with source ``abort``). A request
settled without an answer is denied (permission) or dismissed (UI: ``null``).

A permission answer, however it came, is recorded (``record``: the session's ``permission`` entry)
before its ``permission_resolved`` goes out, which names the request's ``tool_call_id``: a client
that reloads shows the answer on the call's card as a live one did. A session that cannot be
written still settles the request, then raises.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, overload

from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.sink import EventSink
from shard.protocol.agent_commands import PermissionResponse, UiResponse
from shard.protocol.agent_events import (
    ErrorEvent,
    PermissionRequest,
    PermissionResolved,
    UiRequest,
    UiResolved,
)
from shard.protocol.agents import AgentStatus
from shard.protocol.answers import permission_answer_error, ui_answer
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.permissions import ChoiceIntent


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """How a permission request was settled: ``choice_id`` or ``decision``, and who settled it."""

    choice_id: str | None
    decision: str | None
    source: str | None
    label: str | None = None  # who answered, in a person's words (the daemon's source_label)


@dataclass(slots=True)
class _Open:
    request: PermissionRequest | UiRequest
    future: asyncio.Future[Any]


class InvalidAnswer(ShardError):
    """The answer names an open request but does not fit it; the request stays open."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message)


class Clock(Protocol):
    """Time for the headless timeout: the event loop's, or a test's own."""

    def time(self) -> float: ...

    async def sleep_until(self, deadline: float) -> None: ...


class LoopClock:
    def time(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep_until(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - self.time()))


class Responders:
    """Who can answer requests: someone, or nobody — and then whether somebody may come back (a
    daemon client that dropped and may reconnect) or not (end of stdin: a final loss)."""

    def __init__(self, present: bool = True) -> None:
        self.present = present
        self.final = True
        self._lost = asyncio.Event()

    def arrive(self) -> None:
        self.present = True
        self._lost.clear()

    def leave(self, *, final: bool) -> None:
        self.present = False
        self.final = final
        self._lost.set()

    async def lost(self) -> None:
        await self._lost.wait()


class RequestBoard:
    def __init__(
        self,
        events: EventSink,
        *,
        responders: Responders | None = None,
        headless: HeadlessPolicy | None = None,
        clock: Clock | None = None,
        record: Callable[[PermissionResolved], None] | None = None,
    ) -> None:
        self._events = events
        self._emit = events.emit
        self._record = record  # keeps each permission answer (the session) before it is reported
        self._open: dict[str, _Open] = {}
        self.responders = responders or Responders()
        self.headless = headless or HeadlessPolicy()
        self._clock = clock or LoopClock()

    def pending(self) -> list[PermissionRequest | UiRequest]:
        """Open requests, oldest first (what ``sync.pending_requests`` shows)."""
        return [o.request for o in self._open.values()]

    def open(self, request: PermissionRequest | UiRequest) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._open[request.request_id] = _Open(request, future)
        self._emit(request)
        return future

    def notify(self, request: UiRequest) -> None:
        """A ``notify`` UI request only informs: it goes out, and nothing is opened or awaited."""
        self._emit(request)

    # --- asking -------------------------------------------------------------------------------

    @overload
    async def ask(self, request: PermissionRequest) -> PermissionAnswer: ...

    @overload
    async def ask(self, request: UiRequest) -> Any: ...

    async def ask(self, request: PermissionRequest | UiRequest) -> Any:
        """Open ``request`` and wait until it is settled: the answer (a :class:`PermissionAnswer`,
        or the UI value), or what the headless policy, its timeout or an abort settled it with."""
        waiting: AgentStatus = (
            "waiting_for_permission" if isinstance(request, PermissionRequest) else "waiting_for_ui"
        )
        previous = self._events.status
        self._events.set_status(waiting)  # before the request, so it arrives to a waiting agent
        future = self.open(request)
        rid = request.request_id
        asked_headless = not self.responders.present
        deadline: float | None = None
        try:
            while not future.done():
                if not self.responders.present:
                    final = self.responders.final
                    if self.headless.settles_at_once(asked_headless=asked_headless, final=final):
                        self._settle(rid, "headless")
                        break
                    if deadline is None:
                        deadline = self._clock.time() + self.headless.timeout
                if await self._wait(future, deadline):
                    self._time_out(request)
        except asyncio.CancelledError:
            self._settle(rid, "abort")
            raise
        finally:
            self._events.set_status(previous)
        return future.result()

    async def _wait(self, future: asyncio.Future[Any], deadline: float | None) -> bool:
        """Until the answer, the last responder leaving or the deadline: True when the deadline
        passed with the request still open."""
        lost = asyncio.ensure_future(self.responders.lost()) if self.responders.present else None
        timer = asyncio.ensure_future(self._clock.sleep_until(deadline)) if deadline is not None else None
        helpers = [f for f in (lost, timer) if f is not None]
        try:
            await asyncio.wait({future, *helpers}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for helper in helpers:
                helper.cancel()
        return timer is not None and timer.done() and not timer.cancelled() and not future.done()

    def _time_out(self, request: PermissionRequest | UiRequest) -> None:
        rid = request.request_id
        outcome = "denied" if isinstance(request, PermissionRequest) else "dismissed"
        what = "permission" if isinstance(request, PermissionRequest) else "ui"
        message = f"{what} request {rid} got no answer within {self.headless.timeout:g} s; {outcome}"
        self._emit(ErrorEvent(code=ErrorCode.TIMEOUT.value, message=message, fatal=False))
        self._settle(rid, "timeout")

    def _settle(self, request_id: str, source: str) -> None:
        """Close a request nobody answered: a permission is denied, a UI request dismissed."""
        entry = self._open.get(request_id)
        if entry is None:
            return
        if isinstance(entry.request, PermissionRequest):
            self.resolve_permission(request_id, PermissionAnswer(None, "deny", source))
        else:
            self.resolve_ui(request_id, None, source)

    # --- answers from clients ---------------------------------------------------------------

    def answer(self, response: PermissionResponse | UiResponse) -> None:
        """A client's answer. The daemon names who answered (extra fields ``source`` and
        ``source_label``); a direct client is ``client``. First valid answer wins; a late or unknown
        one is dropped silently."""
        extra = response.model_extra or {}
        source = extra.get("source")
        source = source if isinstance(source, str) and source else "client"
        label = extra.get("source_label")
        label = label if isinstance(label, str) and label else None
        if isinstance(response, PermissionResponse):
            self.answer_permission(response, source=source, label=label)
        else:
            self.answer_ui(response, source=source, label=label)

    def answer_permission(
        self, response: PermissionResponse, source: str | None = None, label: str | None = None
    ) -> None:
        entry = self._open.get(response.request_id)
        if entry is None or not isinstance(entry.request, PermissionRequest):
            _late(response.request_id, source)
            return  # late or unknown: dropped silently
        why = permission_answer_error({c.id for c in entry.request.choices or []}, response.choice_id)
        if why is not None:
            raise InvalidAnswer(f"request {shown(response.request_id)}: {why}")
        self.resolve_permission(
            response.request_id, PermissionAnswer(response.choice_id, response.decision, source, label)
        )

    def answer_ui(self, response: UiResponse, source: str | None = None, label: str | None = None) -> None:
        entry = self._open.get(response.request_id)
        if entry is None or not isinstance(entry.request, UiRequest):
            _late(response.request_id, source)
            return
        self.resolve_ui(response.request_id, _check_ui_value(entry.request, response.value), source, label)

    # --- resolution (clients, policy, timeout, abort) ----------------------------------------

    def resolve_permission(self, request_id: str, answer: PermissionAnswer) -> None:
        entry = self._open.pop(request_id, None)
        if entry is None:
            return
        fields: dict[str, Any] = {"request_id": request_id}
        if answer.choice_id is not None:
            fields["choice_id"] = answer.choice_id
        else:
            fields["decision"] = answer.decision or "deny"
        if answer.source is not None:
            fields["source"] = answer.source
        if answer.label is not None:
            fields["source_label"] = answer.label
        assert isinstance(entry.request, PermissionRequest)
        if entry.request.tool_call_id is not None:
            fields["tool_call_id"] = entry.request.tool_call_id
        intent = _intent(entry.request, fields)
        if intent is not None:  # what the answer meant, so a client words it without the request
            fields["intent"] = intent
        resolved = PermissionResolved(**fields)
        try:
            if self._record is not None:
                self._record(resolved)  # a session that cannot be written raises, once settled
        finally:
            self._emit(resolved)
            if not entry.future.done():
                entry.future.set_result(answer)

    def resolve_ui(
        self, request_id: str, value: Any, source: str | None = None, label: str | None = None
    ) -> None:
        entry = self._open.pop(request_id, None)
        if entry is None:
            return
        event = UiResolved(request_id=request_id, value=value)
        if source is not None:
            event.source = source
        if label is not None:
            event.source_label = label
        self._emit(event)
        if not entry.future.done():
            entry.future.set_result(value)


def _intent(request: PermissionRequest, fields: dict[str, Any]) -> ChoiceIntent | None:
    """``allow`` / ``persist`` / ``deny``: the chosen choice's intent, or the legacy decision's."""
    if "choice_id" in fields:
        chosen = next((c for c in request.choices or [] if c.id == fields["choice_id"]), None)
        return chosen.intent if chosen is not None else None
    return _DECISION_INTENT.get(fields["decision"])


_DECISION_INTENT: dict[str, ChoiceIntent] = {"allow": "allow", "allow_always": "persist", "deny": "deny"}


def _check_ui_value(request: UiRequest, value: str | list[str] | None) -> Any:
    """The value a ``ui_response`` carries, checked against what the request asked for."""
    checked, why = ui_answer(request.kind, request.options, value)
    if why is not None:
        raise InvalidAnswer(why)
    return checked


def _late(request_id: str, source: str | None) -> None:
    """A late answer from a direct client is normal (it lost the race) and dropped silently. One
    that a daemon forwarded (it names its ``source``) breaks the daemon's promise to forward only
    the first answer (PROTOCOL §6.3): say so, since nothing else would show it. (A direct client's
    answers carry the source ``client``.)"""
    if source not in (None, "client"):
        sys.stderr.write(
            f"shard: dropped a second answer to {shown(request_id)} forwarded by the daemon ({source})\n"
        )

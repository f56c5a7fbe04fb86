"""Open permission and UI requests: first valid answer wins, each is resolved exactly once
(PROTOCOL §6.3, §9.5).

The board emits ``permission_request``/``ui_request`` when a request opens and
``permission_resolved``/``ui_resolved`` when it closes, whoever closes it (a client, the headless
policy, a timeout, an abort). An answer that names no open request — late, or made up — is dropped
silently. An answer that does not fit the request (a ``choice_id`` it does not offer, a ``select``
value outside its options) is refused and the request stays open for another answer.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shard.protocol.answers import permission_answer_error, ui_answer
from shard.protocol.commands import PermissionResponse, UiResponse
from shard.protocol.errors import shown
from shard.protocol.events import EventBase, PermissionRequest, PermissionResolved, UiRequest, UiResolved


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """How a permission request was settled: ``choice_id`` or ``decision``, and who settled it."""

    choice_id: str | None
    decision: str | None
    source: str | None


@dataclass(slots=True)
class _Open:
    request: PermissionRequest | UiRequest
    future: asyncio.Future[Any]


class InvalidAnswer(Exception):
    """The answer names an open request but does not fit it; the request stays open."""


class RequestBoard:
    def __init__(self, emit: Callable[[EventBase], None]) -> None:
        self._emit = emit
        self._open: dict[str, _Open] = {}

    def pending(self) -> list[PermissionRequest | UiRequest]:
        """Open requests, oldest first (what ``sync.pending_requests`` shows)."""
        return [o.request for o in self._open.values()]

    def open(self, request: PermissionRequest | UiRequest) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._open[request.request_id] = _Open(request, future)
        self._emit(request)
        return future

    # --- answers from clients ---------------------------------------------------------------

    def answer_permission(self, response: PermissionResponse, source: str | None = None) -> None:
        entry = self._open.get(response.request_id)
        if entry is None or not isinstance(entry.request, PermissionRequest):
            _late(response.request_id, source)
            return  # late or unknown: dropped silently
        why = permission_answer_error({c.id for c in entry.request.choices or []}, response.choice_id)
        if why is not None:
            raise InvalidAnswer(f"request {shown(response.request_id)}: {why}")
        self.resolve_permission(
            response.request_id, PermissionAnswer(response.choice_id, response.decision, source)
        )

    def answer_ui(self, response: UiResponse, source: str | None = None) -> None:
        entry = self._open.get(response.request_id)
        if entry is None or not isinstance(entry.request, UiRequest):
            _late(response.request_id, source)
            return
        self.resolve_ui(response.request_id, _check_ui_value(entry.request, response.value), source)

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
        self._emit(PermissionResolved(**fields))
        if not entry.future.done():
            entry.future.set_result(answer)

    def resolve_ui(self, request_id: str, value: Any, source: str | None = None) -> None:
        entry = self._open.pop(request_id, None)
        if entry is None:
            return
        event = UiResolved(request_id=request_id, value=value)
        if source is not None:
            event.source = source
        self._emit(event)
        if not entry.future.done():
            entry.future.set_result(value)


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

"""Prompt-and-wait: send a prompt, follow the turn that carries it, return when it ends.

The turn is recognised by its user message: the first ``message_complete`` of role ``user`` whose
text is the prompt, seen after the prompt was sent; the turn ends with the ``turn_end`` of the turn
it was delivered in. If the connection drops meanwhile, the client re-attaches and the fresh
``sync`` stands in for what was missed: the window from the prompt on, and ``idle`` meaning the turn
already ended. Permission requests go to ``on_permission``: its answer is sent as a ``choice_id``
when the request offers that choice (or it is no legacy decision), else as the legacy ``decision``;
``None`` leaves the request to other clients.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from shard.client.errors import TurnFailed, TurnTimeout
from shard.client.streams import EventStream
from shard.client.transcript import message_text, stop_reason
from shard.protocol.agents import Usage
from shard.protocol.content import Message
from shard.protocol.events import (
    AgentEvent,
    ErrorEvent,
    MessageComplete,
    PermissionRequest,
    Response,
    Sync,
    TurnEnd,
    TurnStart,
)

_DECISIONS = ("allow", "allow_always", "deny")


class _Drivable(Protocol):
    def subscribe(self) -> EventStream[AgentEvent]: ...

    async def prompt(self, message: str, *, streaming_behavior: Any = None) -> Response: ...

    async def answer_permission(
        self, request_id: str, *, choice_id: Any = None, decision: Any = None
    ) -> Response: ...


@dataclass
class TurnResult:
    """What the turn produced: its messages from the prompt on (user message first), every event
    seen while waiting, its ``turn_id`` and ``usage`` when known."""

    messages: list[Message] = field(default_factory=list)
    events: list[AgentEvent] = field(default_factory=list)
    turn_id: str | None = None
    usage: Usage | None = None

    @property
    def final_message(self) -> Message | None:
        """The turn's last assistant message."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message
        return None

    @property
    def stop_reason(self) -> str:
        """Why the turn's last reply ended: ``completed``, or ``aborted``, ``interrupted``,
        ``max_tokens``, ``failed`` (``completed`` when the turn has no reply)."""
        final = self.final_message
        return stop_reason(final) if final is not None else "completed"

    @property
    def text(self) -> str:
        """The text of the final assistant message."""
        final = self.final_message
        return message_text(final) if final is not None else ""


async def prompt_and_wait(
    agent: _Drivable,
    message: str,
    *,
    timeout: float | None = None,
    on_permission: Callable[[PermissionRequest], Awaitable[str | None]] | None = None,
    streaming_behavior: Any = None,
) -> TurnResult:
    stream = agent.subscribe()  # before the prompt: nothing of the turn can slip past
    try:
        await agent.prompt(message, streaming_behavior=streaming_behavior)
        async with asyncio.timeout(timeout):
            return await _follow(agent, stream, message, on_permission)
    except TimeoutError as exc:
        raise TurnTimeout(f"the turn did not end within {timeout} s") from exc
    finally:
        stream.close()


async def _follow(
    agent: _Drivable,
    stream: EventStream[AgentEvent],
    message: str,
    on_permission: Callable[[PermissionRequest], Awaitable[str | None]] | None,
) -> TurnResult:
    result = TurnResult()
    current: str | None = None
    mine = False  # the prompt's user message has been seen
    async for event in stream:
        result.events.append(event)
        if isinstance(event, TurnStart):
            current = event.turn_id
        elif isinstance(event, MessageComplete):
            if not mine and _is_prompt(event.message, message):
                mine, result.turn_id, result.messages = True, current, [event.message]
            elif mine:
                _settle(result.messages, event.message)
        elif isinstance(event, PermissionRequest) and on_permission is not None:
            answer = await on_permission(event)
            choices = {choice.id for choice in event.choices or []}
            if answer is not None and (answer in choices or answer not in _DECISIONS):
                await agent.answer_permission(event.request_id, choice_id=answer)  # preferred (§9.5)
            elif answer is not None:
                await agent.answer_permission(event.request_id, decision=answer)
        elif isinstance(event, ErrorEvent) and event.fatal:
            raise TurnFailed(event.code, event.message)
        elif isinstance(event, TurnEnd) and mine and result.turn_id in (None, event.turn_id):
            result.usage = event.usage
            return result
        elif isinstance(event, Sync):  # re-attached after a drop: the snapshot covers the gap
            window = event.live_window.messages
            start = _find_prompt(window, message, result.messages[0].id if mine else None)
            if start is not None:
                mine, result.messages = True, list(window[start:])
                if result.turn_id is None or event.status != "idle":
                    result.turn_id = None  # the turn's id may not be known: its next turn_end ends it
            if mine and event.status == "idle":
                return result
    raise TurnFailed("CLOSED", "the event stream ended before the turn did")


def _is_prompt(msg: Message, text: str) -> bool:
    return msg.role == "user" and message_text(msg) == text


def _find_prompt(window: list[Message], text: str, known_id: str | None) -> int | None:
    for i in range(len(window) - 1, -1, -1):  # the latest match: an earlier turn may have said the same
        msg = window[i]
        if (known_id is not None and msg.id == known_id) or (known_id is None and _is_prompt(msg, text)):
            return i
    return None


def _settle(messages: list[Message], msg: Message) -> None:
    for i, known in enumerate(messages):
        if known.id == msg.id:
            messages[i] = msg
            return
    messages.append(msg)

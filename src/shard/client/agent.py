"""One agent as a client drives it: its state as far as the client knows, its event streams and
its per-agent commands (PROTOCOL §9).

An :class:`Agent` is made by :meth:`ShardClient.attach` / :meth:`ShardClient.create_agent` (daemon
path, commands carry ``agent_id``) or by :func:`shard.client.connect_stdio` (direct path, no
``agent_id``). It folds every event it receives (the fold is :class:`.agent_state.AgentState`, which
the terminal client's view extends too) into ``status``, ``mode``, ``model``, ``capabilities``,
``runtime_epoch``, ``pending`` (open permission/UI requests), ``queue`` (the messages waiting to
be delivered) and ``transcript``, then hands it to every open stream. A queued message handed back
(an abort, a failed turn, a runtime gone) arrives as a ``QueueChanged`` whose ``returned`` lists it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from shard.client.agent_state import AgentState
from shard.client.errors import CapabilityMissing, RequestTimeout, StaleRuntime
from shard.client.streams import EventStream, broadcast, end_all
from shard.client.turns import TurnResult, prompt_and_wait
from shard.protocol.agents import AgentStatus
from shard.protocol.commands import (
    Abort,
    AgentCommand,
    ListModels,
    ListModes,
    PermissionResponse,
    Prompt,
    SessionOp,
    SetMode,
    SetModel,
    Steer,
    UiResponse,
    Unqueue,
)
from shard.protocol.content import Image
from shard.protocol.events import AgentEvent, PermissionRequest, Response, Sync
from shard.protocol.permissions import Decision
from shard.protocol.queue import QueuedMessage
from shard.protocol.results import (
    ListModelsResult,
    ListModesResult,
    SetModelResult,
    SetModeResult,
    UnqueueResult,
)

Behavior = Literal["steer", "follow_up"]
Request = Callable[[AgentCommand, float | None, str | None], Awaitable[Response]]


def prompt_command(
    status: AgentStatus | None,
    message: str,
    *,
    images: list[Image] | None = None,
    streaming_behavior: Behavior | None = None,
) -> Prompt:
    """The ``prompt`` to send given the agent's last known status: ``streaming_behavior`` is left out
    when the agent is idle (R9.2.3) and required mid-turn (R9.2.2: ``follow_up`` unless told)."""
    fields: dict[str, Any] = {"message": message}
    if images:
        fields["images"] = images
    if status not in (None, "idle"):
        fields["streaming_behavior"] = streaming_behavior or "follow_up"
    return Prompt(**fields)


class Agent(AgentState):
    def __init__(self, request: Request, agent_id: str | None, *, role: str | None = None) -> None:
        super().__init__(agent_id)
        self._request = request
        self.role = role
        self.owned = False  # created by this client: terminated when it closes (R3.7)
        self.last_sync: Sync | None = None
        self._streams: list[EventStream[AgentEvent]] = []
        self._primary = EventStream[AgentEvent](self._streams)
        self._synced = asyncio.Event()
        self._on_stale: Callable[[StaleRuntime], None] | None = None

    def __repr__(self) -> str:
        return f"Agent({self.agent_id!r}, status={self.status!r})"

    # --- what arrives -------------------------------------------------------------------------

    def _receive(self, event: AgentEvent) -> None:
        self.apply(event)
        broadcast(self._streams, event)

    def apply_sync(self, sync: Sync) -> None:
        epoch = sync.runtime_epoch
        superseded = self.runtime_epoch is not None and epoch is not None and epoch != self.runtime_epoch
        if superseded and self._on_stale is not None:  # answers still due: from the superseded process
            self._on_stale(StaleRuntime(f"agent {self.agent_id}: runtime epoch {epoch} took over"))
        super().apply_sync(sync)
        self.last_sync = sync
        self._synced.set()

    def _end(self, error: BaseException | None) -> None:
        end_all(self._streams, error)

    # --- streams ------------------------------------------------------------------------------

    def events(self) -> EventStream[AgentEvent]:
        """The stream opened with the agent: ``sync`` first, then every event, exactly once — across
        reconnects too (each re-attach yields a fresh ``sync``, then what follows it)."""
        return self._primary

    def subscribe(self) -> EventStream[AgentEvent]:
        """Another stream, starting with the next event. ``close()`` it when done."""
        return EventStream[AgentEvent](self._streams)

    # --- capability gating (R9.1.10, R7.10; ``supports`` is the fold's) ----------------------

    def require(self, capability: str) -> None:
        if not self.supports(capability):
            raise CapabilityMissing(f"agent {self.agent_id}: the runtime does not advertise {capability!r}")

    # --- commands -----------------------------------------------------------------------------

    async def send(self, command: AgentCommand, *, timeout: float | None = None) -> Response:
        """Any per-agent command, routed to this agent; its (successful) response."""
        if self.agent_id is not None:
            command.agent_id = self.agent_id
        return await self._request(command, timeout, self.agent_id)

    async def prompt(
        self,
        message: str,
        *,
        images: list[Image] | None = None,
        streaming_behavior: Behavior | None = None,
        timeout: float | None = None,
    ) -> Response:
        """Send a user message; the response means accepted/queued, the turn plays out as events."""
        command = prompt_command(self.status, message, images=images, streaming_behavior=streaming_behavior)
        return await self.send(command, timeout=timeout)

    async def steer(self, message: str, *, images: list[Image] | None = None) -> Response:
        fields: dict[str, Any] = {"message": message}
        if images:
            fields["images"] = images
        return await self.send(Steer(**fields))

    async def abort(self) -> Response:
        """Cancel the turn. Nothing queued is delivered after it: each queued message comes back in a
        ``QueueChanged`` whose ``returned`` lists it."""
        return await self.send(Abort())

    async def unqueue(self, queue_id: str) -> QueuedMessage:
        """Withdraw a queued message (one of ``queue``) before it is delivered; the message withdrawn.
        CommandError ``NOT_FOUND`` when it was delivered (or handed back) first: delivery wins."""
        self.require("message-queue")
        response = await self.send(Unqueue(queue_id=queue_id))
        return UnqueueResult.model_validate(response.data).withdrawn

    async def set_mode(self, mode: str) -> SetModeResult:
        self.require("mode-switch")
        return SetModeResult.model_validate((await self.send(SetMode(mode=mode))).data)

    async def list_modes(self) -> ListModesResult:
        self.require("mode-catalog")
        return ListModesResult.model_validate((await self.send(ListModes())).data)

    async def list_models(self) -> ListModelsResult:
        self.require("model-catalog")
        return ListModelsResult.model_validate((await self.send(ListModels())).data)

    async def set_model(self, model: str) -> SetModelResult:
        self.require("model-switch")
        return SetModelResult.model_validate((await self.send(SetModel(model=model))).data)

    async def session_op(self, op: str, args: dict[str, Any] | None = None) -> Any:
        """``session_op`` (list / compact / fork); the response's ``data``."""
        fields: dict[str, Any] = {"op": op, **({"args": args} if args is not None else {})}
        return (await self.send(SessionOp(**fields))).data

    async def answer_permission(
        self,
        request_id: str,
        *,
        choice_id: str | None = None,
        decision: Decision | None = None,
        reason: str | None = None,
    ) -> Response:
        """Answer a permission request: by ``choice_id`` (preferred) or by legacy ``decision``."""
        return await self.send(permission_response(request_id, choice_id, decision, reason))

    async def answer_ui(self, request_id: str, value: str | list[str] | None) -> Response:
        return await self.send(UiResponse(request_id=request_id, value=value))

    async def wait_synced(self, timeout: float | None = None) -> Sync:
        """The agent's latest ``sync``, once one arrived (RequestTimeout after ``timeout``)."""
        try:
            await asyncio.wait_for(self._synced.wait(), timeout)
        except TimeoutError:
            raise RequestTimeout(f"agent {self.agent_id}: no sync within {timeout} s") from None
        assert self.last_sync is not None
        return self.last_sync

    async def prompt_and_wait(
        self,
        message: str,
        *,
        timeout: float | None = None,
        on_permission: Callable[[PermissionRequest], Awaitable[str | None]] | None = None,
        streaming_behavior: Behavior | None = None,
    ) -> TurnResult:
        """Prompt, then wait for the turn that carries the message to end (see :mod:`.turns`);
        ``timeout`` raises TurnTimeout (the turn goes on)."""
        return await prompt_and_wait(
            self, message, timeout=timeout, on_permission=on_permission, streaming_behavior=streaming_behavior
        )


def permission_response(
    request_id: str, choice_id: str | None, decision: Decision | None, reason: str | None
) -> PermissionResponse:
    """The answer to permission request ``request_id``, with only the fields given."""
    fields: dict[str, Any] = {"request_id": request_id}
    if choice_id is not None:
        fields["choice_id"] = choice_id
    if decision is not None:
        fields["decision"] = decision
    if reason is not None:
        fields["reason"] = reason
    return PermissionResponse(**fields)


def choice_for(request: PermissionRequest, intent: Literal["allow", "persist", "deny"] = "allow") -> str:
    """The id of ``request``'s first choice with ``intent`` (KeyError if it offers none)."""
    for choice in request.choices or []:
        if choice.intent == intent:
            return choice.id
    raise KeyError(f"permission request {request.request_id} offers no {intent!r} choice")

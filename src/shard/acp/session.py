"""One ACP session: a Shard agent, and the task that turns its events into ``session/update``s.

Every event of the agent is forwarded, whichever client caused it — a turn prompted from the web
client streams into the editor too — except the editor's own prompt echoed back. A prompt waits for
the turn that delivers it (:class:`~shard.acp.stops.TurnWatch`); its response is sent only after
every update of that turn, since one task forwards them in order and then ends the wait.

Permission requests are asked of the editor each in a task of its own, so the forwarding goes on
while the editor's dialog is open: when another client answers first (``permission_resolved``) the
editor's request is abandoned and its late answer ignored — the daemon keeps the first answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from acp import RequestError, helpers
from acp.interfaces import Client
from acp.schema import (
    ConfigOptionUpdate,
    PromptResponse,
    SessionConfigOptionSelect,
    StopReason,
    ToolCallUpdate,
)

from shard.acp.backends import Opened
from shard.acp.mapping import (
    answer_for,
    call_start,
    diff_content,
    permission_options,
    permission_text,
    replay_updates,
    result_update,
    tool_kind,
)
from shard.acp.stops import Seen, TurnWatch
from shard.client import Agent, EventStream, ShardClientError
from shard.protocol.content import Image, ToolCallBlock
from shard.protocol.events import (
    AgentEvent,
    ErrorEvent,
    MessageComplete,
    MessageDelta,
    ModeChanged,
    ModelChanged,
    PermissionRequest,
    PermissionResolved,
    ToolCall,
    ToolResult,
)
from shard.protocol.render import DiffRender

log = logging.getLogger("shard.acp")


class AcpSession:
    def __init__(self, opened: Opened, client: Client, cwd: str) -> None:
        self.id = opened.session_id
        self.agent: Agent = opened.agent
        self.cwd = cwd
        self.models: SessionConfigOptionSelect | None = None  # the model option, when offered
        self._opened = opened
        self._client = client
        self._stream: EventStream[AgentEvent] = self.agent.subscribe()  # nothing slips before start()
        self._pump: asyncio.Task[None] | None = None
        self._watch: TurnWatch | None = None
        self._done: asyncio.Future[StopReason] | None = None
        self._prompting = asyncio.Lock()
        self._asks: dict[str, asyncio.Task[None]] = {}
        self._started: set[str] = set()  # tool calls the editor has been told of
        self._unrun: dict[str, ToolCallBlock] = {}  # announced, not yet running: what a request is for

    # --- life ---------------------------------------------------------------------------------

    async def replay(self) -> None:
        """session/load: the conversation so far, as updates (before the response, as ACP says)."""
        sync = self.agent.last_sync
        for message in sync.live_window.messages if sync is not None else []:
            for update in replay_updates(message, self.cwd):
                if getattr(update, "session_update", None) == "tool_call":
                    self._started.add(update.tool_call_id)
                await self._send(update)

    def start(self) -> None:
        self._pump = asyncio.create_task(self._forward(), name=f"acp-session-{self.id}")

    async def close(self) -> None:
        for task in self._asks.values():
            task.cancel()
        self._stream.close()
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        with contextlib.suppress(ShardClientError):
            await self._opened.release()

    # --- prompts ------------------------------------------------------------------------------

    async def prompt(self, text: str, images: list[Image]) -> PromptResponse:
        async with self._prompting:
            if self._pump is None or self._pump.done():
                raise RequestError.internal_error({"message": "the agent of this session has ended"})
            watch = TurnWatch(text)
            done: asyncio.Future[StopReason] = asyncio.get_running_loop().create_future()
            self._watch, self._done = watch, done
            try:
                await self.agent.prompt(text, images=images or None)
                stop = await done
            finally:
                self._watch, self._done = None, None
            if watch.failure is not None:
                raise RequestError.internal_error({"message": watch.failure})
            return PromptResponse(stop_reason=stop)

    async def cancel(self) -> None:
        """session/cancel: abort the turn; its prompt answers ``cancelled``."""
        if self._watch is not None:
            self._watch.cancelled = True
        await self.agent.abort()

    # --- forwarding ---------------------------------------------------------------------------

    async def _forward(self) -> None:
        try:
            async for event in self._stream:
                seen = self._watch.feed(event) if self._watch is not None else None
                if seen is not Seen.PROMPT:
                    await self._handle(event)
                if seen is Seen.END and self._done is not None and self._watch is not None:
                    self._done.set_result(self._watch.stop or "end_turn")
        except (ShardClientError, ConnectionError, RequestError) as exc:  # the agent or the editor left
            log.warning("session %s: %s", self.id, exc)
        finally:
            if self._done is not None and not self._done.done():
                why = "the agent's connection ended during the turn"
                self._done.set_exception(RequestError.internal_error({"message": why}))

    async def _handle(self, event: AgentEvent) -> None:
        if isinstance(event, MessageDelta):
            await self._delta(event)
        elif isinstance(event, MessageComplete):
            await self._complete(event)
        elif isinstance(event, ToolCall):
            self._unrun.pop(event.tool_call_id, None)
            await self._running(event)
        elif isinstance(event, ToolResult):
            self._unrun.pop(event.tool_call_id, None)
            await self._send(result_update(event, self.cwd))
        elif isinstance(event, PermissionRequest):
            self._asks[event.request_id] = asyncio.create_task(self._ask(event))
        elif isinstance(event, PermissionResolved):
            task = self._asks.pop(event.request_id, None)
            if task is not None and not task.done():
                task.cancel()  # answered elsewhere first: the editor's answer would lose anyway
        elif isinstance(event, ModeChanged):
            await self._send(helpers.update_current_mode(event.mode))
        elif isinstance(event, ModelChanged):
            await self._model_changed(event)
        elif isinstance(event, ErrorEvent):
            await self._send(helpers.update_agent_message_text(f"\n\n⚠ {event.message}\n"))

    async def _delta(self, event: MessageDelta) -> None:
        if event.kind == "text" and event.text_delta:
            await self._send(helpers.update_agent_message_text(event.text_delta))
        elif event.kind == "thinking" and event.text_delta:
            await self._send(helpers.update_agent_thought_text(event.text_delta))
        elif event.kind == "tool_call" and event.tool_call_id and event.name:
            self._started.add(event.tool_call_id)
            call = ToolCallBlock(id=event.tool_call_id, name=event.name, args={})
            await self._send(call_start(call, self.cwd, "pending"))

    async def _complete(self, event: MessageComplete) -> None:
        message = event.message
        if message.role == "user":  # another client's prompt (the editor's own is not echoed)
            for update in replay_updates(message, self.cwd):
                await self._send(update)
            return
        for block in message.content:
            if not isinstance(block, ToolCallBlock):
                continue
            self._unrun[block.id] = block
            start = call_start(block, self.cwd, "pending")
            if block.id in self._started:  # announced by its first delta: now with its arguments
                update = helpers.update_tool_call(
                    block.id,
                    title=start.title,
                    kind=start.kind,
                    locations=start.locations,
                    raw_input=start.raw_input,
                )
                await self._send(update)
            else:
                self._started.add(block.id)
                await self._send(start)

    async def _running(self, event: ToolCall) -> None:
        content: list[Any] = []
        if isinstance(event.render, DiffRender):  # a write's or an edit's change, before it runs
            content.append(diff_content(event.render, self.cwd))
        update = helpers.update_tool_call(
            event.tool_call_id,
            status="in_progress",
            kind=tool_kind(event.name, event.read_only),
            content=content or None,
        )
        await self._send(update)

    async def _model_changed(self, event: ModelChanged) -> None:
        if self.models is None:
            return
        self.models = self.models.model_copy(update={"current_value": event.active.id})
        update = ConfigOptionUpdate(session_update="config_option_update", config_options=[self.models])
        await self._send(update)

    async def _ask(self, request: PermissionRequest) -> None:
        """Ask the editor; answer the agent with the option it picked (by choice id)."""
        call = next(
            (b for b in self._unrun.values() if b.name == request.tool_name and b.args == request.input), None
        )
        call_id = call.id if call is not None else request.request_id
        if call is None:  # nothing announced matches: show what is asked as a call of its own
            args = request.input if isinstance(request.input, dict) else {}
            block = ToolCallBlock(id=call_id, name=request.tool_name, args=args)
            await self._send(call_start(block, self.cwd, "pending"))
        update = ToolCallUpdate(
            tool_call_id=call_id,
            title=request.prompt,
            status="pending",
            content=[helpers.tool_content(helpers.text_block(permission_text(request)))],
        )
        try:
            response = await self._client.request_permission(
                session_id=self.id, tool_call=update, options=permission_options(request)
            )
            outcome = response.outcome
            if outcome.outcome != "selected":  # the editor cancelled (its prompt was cancelled)
                return
            answer = answer_for(request, outcome.option_id)
            if answer is None:
                log.warning("the editor picked %r, which was not offered", outcome.option_id)
                return
            await self.agent.answer_permission(
                request.request_id, choice_id=answer.choice_id, decision=answer.decision
            )
        except (RequestError, ConnectionError, ShardClientError) as exc:
            log.warning("permission %s: %s", request.request_id, exc)
        finally:
            self._asks.pop(request.request_id, None)

    async def _send(self, update: Any) -> None:
        await self._client.session_update(session_id=self.id, update=update)

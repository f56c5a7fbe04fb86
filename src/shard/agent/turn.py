"""The turn loop: ``drive → turn → (call the model → run its tools)*``.

One turn answers one user input. Before every model call the pending steers are delivered and a
pending model switch is applied; the turn ends when the model answers without tool calls and no steer
is waiting. Follow-ups queued meanwhile each start the next turn once this one has fully ended.

A turn exits with a typed outcome, and :func:`drive` handles every outcome in one place:
:class:`Completed`; :class:`Failed` (a model call failed — reported already — and the agent goes on);
:class:`Aborted` (the task was cancelled: each stage wound itself down on the way out, keeping the
partial assistant message and giving every tool call that will not get a real result an "aborted"
one, so the transcript stays valid for the next request); :class:`Fatal` (the session could not be
written: nothing more can be trusted). Each turn closes with ``turn_end`` whatever its outcome,
recorded first (a ``turn_end`` entry with the turn's usage, which a reloaded client shows after the
turn's last message). A reply's tool calls run in :mod:`shard.agent.tool_runs`.

Every assistant message records why it ended (``Message.stop_reason``): ``completed`` or
``max_tokens`` from the model, ``aborted`` or ``interrupted`` when the work was cancelled (by a
client's abort, or by the runtime shutting down: :class:`Stopping`), ``failed`` when the provider
failed mid-reply. A ``message_start`` entry goes to the session with a reply's first delta, so a
restore after a crash can tell that a reply was cut (``session/unfinished.py``).

The loop gets what it uses (:class:`TurnContext`), never the runtime.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from shard.agent.assembler import MessageAssembler
from shard.agent.catalog import ModelEntry
from shard.agent.compaction.tiers import (
    at_ceiling,
    auto_compact,
    call_parts,
    idle_due,
    know_the_window,
    reply_cap,
)
from shard.agent.output_limit import continuations, notice
from shard.agent.providers.base import ProviderError, ProviderRequest
from shard.agent.providers.retry import stream_with_retries
from shard.agent.tool_runs import UNRUN, ToolRuns, refused
from shard.agent.turn_context import TurnContext
from shard.agent.turn_usage import TurnUsage, usage_dict, usage_event
from shard.protocol.agent_events import ErrorEvent, MessageComplete, TurnEnd, TurnStart
from shard.protocol.content import ContentBlock, Image, ImageBlock, Message, TextBlock
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.ids import new_id
from shard.protocol.stops import StopReason

CUT_OFF = "Not run: the model's response was cut off before it finished."


@dataclass(frozen=True, slots=True)
class UserInput:
    text: str
    images: list[Image] | None = None


@dataclass(frozen=True, slots=True)
class Completed:
    pass


@dataclass(frozen=True, slots=True)
class Failed:
    """A model call failed; it was reported and the agent goes on."""


@dataclass(frozen=True, slots=True)
class Aborted:
    pass


@dataclass(frozen=True, slots=True)
class Fatal:
    error: ShardError


Outcome = Completed | Failed | Aborted | Fatal


async def drive(ctx: TurnContext, first: UserInput) -> list[Outcome]:
    """Run turns until nothing is queued (or one is aborted or fatal); the outcome of each."""
    outcomes: list[Outcome] = []
    inp: UserInput | None = first
    while inp is not None:
        turn = _Turn(ctx)
        try:
            outcome = await turn.run(inp)
        finally:
            ctx.strict.end()  # a strict steer the turn did not take is answered conflict, never carried
        outcomes.append(outcome)
        if isinstance(outcome, Fatal):
            ctx.events.fail(outcome.error)  # reported before turn_end: the turn ended because of it
        if (failed := turn.end()) is not None:  # its turn_end could not be recorded
            outcomes[-1] = outcome = Fatal(failed)
        if isinstance(outcome, Aborted | Fatal):
            break  # the runtime hands back what is queued
        if isinstance(outcome, Failed):  # steers for a turn that ended without their model call
            ctx.queue.hand_back(ctx.queue.take_all("steer"), "turn_failed")
        if not ctx.queue.has("follow_up") and idle_due(ctx):
            try:  # the default tier: as the agent goes idle
                await auto_compact(ctx, back_to=None)
            except asyncio.CancelledError:
                uncancel()
                outcomes.append(Aborted())
                break
        follow_up = ctx.queue.take_follow_up()
        inp = UserInput(follow_up.message, follow_up.images) if follow_up else None
    return outcomes


def uncancel() -> None:
    """The cancellation was handled (abort winds the work down): the task goes on to finish. The
    runtime's manual compaction uses it too."""
    current = asyncio.current_task()
    if current is not None:
        current.uncancel()


class _CallFailed(Exception):
    """The model call failed and was reported: the turn ends :class:`Failed`."""


class _Overflow(Exception):
    """The provider said the context is too long before anything streamed (in its words)."""


class _Turn:
    def __init__(self, ctx: TurnContext) -> None:
        self.ctx = ctx
        self.id = new_id("turn")
        self.usage = TurnUsage()
        self.tool_runs = ToolRuns(
            ctx.transcript, ctx.events, ctx.tools, ctx.approve, ctx.tool_context, ctx.stopping
        )
        self._cuts = 0  # replies the output limit cut in a tool call (output_limit.py)
        self._entry: ModelEntry | None = None  # the model of the last call

    async def run(self, inp: UserInput) -> Outcome:
        ctx = self.ctx
        ctx.events.set_status("streaming")
        ctx.events.emit(TurnStart(turn_id=self.id))
        ctx.strict.begin(self.id)
        try:
            self._deliver(inp)
            if ctx.prepare is not None:
                await ctx.prepare(ctx.tools, ctx.events)
            await know_the_window(ctx)
            while True:
                while (steer := ctx.queue.take_steer()) is not None:
                    self._deliver(UserInput(steer.message, steer.images))
                ctx.strict.drain(lambda text: self._deliver(UserInput(text)))
                if at_ceiling(ctx, call_parts(ctx)):  # the emergency tier: the next call would not fit
                    await auto_compact(ctx, back_to="streaming")
                assembler = await self._call_model()
                calls = assembler.tool_calls()
                if calls:
                    await self.tool_runs.run(calls)
                    if self._cut_for_good(assembler):
                        return Failed()
                elif not ctx.queue.has("steer") and not ctx.strict.pending:
                    return Completed()
        except _CallFailed:
            return Failed()
        except asyncio.CancelledError:
            uncancel()
            return Aborted()
        except ShardError as exc:  # the session could not be written
            return Fatal(exc)

    def end(self) -> ShardError | None:
        """``turn_end`` with the usage summed over the turn's calls, recorded first (a reloaded client
        shows it after the turn's last message); then the session is fsynced. A session that cannot
        be written is fatal: reported before ``turn_end``, and returned."""
        ctx, end = self.ctx, TurnEnd(turn_id=self.id)
        if self.usage.total is not None:
            end.usage = self.usage.total
        failed = None
        if ctx.events.fatal is None:
            try:
                ctx.transcript.record("turn_end", **{k: v for k, v in end.to_wire().items() if k != "type"})
            except ShardError as exc:
                failed = exc
                ctx.events.fail(exc)
        ctx.events.emit(end)
        ctx.transcript.checkpoint()
        return failed

    def _deliver(self, inp: UserInput) -> None:
        content: list[ContentBlock] = [TextBlock(text=inp.text)]
        for image in inp.images or []:
            content.append(ImageBlock(data=image.data, mime_type=image.mime_type))
        message = Message(id=new_id("msg"), role="user", content=content)
        self.ctx.transcript.record_message(message)
        self.ctx.events.emit(MessageComplete(message_id=message.id, message=message))

    # --- the model ----------------------------------------------------------------------------

    async def _call_model(self) -> MessageAssembler:
        """One provider call, streamed. A provider's "context too long" answer, before anything
        streamed, compacts once and tries again."""
        said = ""
        for attempt in (1, 2):
            try:
                return await self._call_once(overflow_retry=attempt == 1)
            except _Overflow as exc:
                said = f" ({exc})"
                if not await auto_compact(self.ctx, back_to="streaming"):
                    break
        self._report(ErrorCode.PROVIDER_ERROR.value, f"the context is too long for the model{said}")
        raise _CallFailed

    async def _call_once(self, *, overflow_retry: bool) -> MessageAssembler:
        ctx = self.ctx
        try:
            entry, provider = ctx.models.take_provider()
        except ShardError as exc:
            self._report(ErrorCode.PROVIDER_ERROR.value, exc.message)
            raise _CallFailed from None
        parts = call_parts(ctx)
        request = ProviderRequest(
            model=entry.model.id,
            system=parts.system,
            messages=list(ctx.transcript.model_view),
            tools=parts.tools,
            reasoning=ctx.models.reasoning if entry.has_reasoning else None,
            call_index=ctx.transcript.assistant_messages,
            max_output_tokens=reply_cap(parts, entry),
        )
        assembler = MessageAssembler(new_id("msg"))

        def on_retry(detail: str | None) -> None:
            ctx.events.set_status("streaming", detail)

        ctx.transcript.streaming = assembler
        started = False
        try:
            async with aclosing(stream_with_retries(provider, request, ctx.retry, on_retry)) as stream:
                async for event in stream:
                    delta = assembler.feed(event)
                    if delta is not None:
                        if not started:  # on disk: a restore after a crash knows a reply was cut
                            ctx.transcript.record("message_start", message_id=assembler.message_id)
                            started = True
                        ctx.events.emit(delta)
            ctx.transcript.streaming = None  # before message_complete: a later sync has it in its window
        except asyncio.CancelledError:
            ctx.transcript.streaming = None
            cause = ctx.stopping.cause
            self._keep_partial(assembler, cause, unrun=UNRUN[cause][0])
            raise
        except Exception as exc:  # any provider failure ends this turn, never the agent
            ctx.transcript.streaming = None
            if isinstance(exc, ShardError) and not isinstance(exc, ProviderError):
                raise  # the session could not be written: fatal, not the provider's failure
            error = (
                exc
                if isinstance(exc, ProviderError)
                else ProviderError(f"the provider failed unexpectedly: {type(exc).__name__}: {exc}")
            )
            if error.context_overflow and assembler.empty and overflow_retry:
                raise _Overflow(error.message) from None
            self._keep_partial(assembler, "failed", unrun=CUT_OFF, detail=error.message)
            self._report_usage(assembler, entry)
            self._report(error.code.value, error.message)
            raise _CallFailed from None
        extra: dict[str, Any] = {"stop_reason": assembler.stop or "end_turn", "model": entry.id}
        if assembler.usage is not None:
            extra["usage"] = usage_dict(assembler.usage)
        message = assembler.message()
        message.stop_reason = "max_tokens" if assembler.stop == "max_tokens" else "completed"
        ctx.transcript.record_message(message, **extra)
        ctx.events.emit(MessageComplete(message_id=message.id, message=message))
        self._report_usage(assembler, entry)
        self._entry = entry
        if assembler.stop == "max_tokens" and not any(c.cut for c in assembler.tool_calls()):
            # kept, but nobody should take it for the whole answer (a cut call: _cut_for_good)
            self._report(ErrorCode.PROVIDER_ERROR.value, notice(entry, assembler.output_limit))
        return assembler

    def _cut_for_good(self, assembler: MessageAssembler) -> bool:
        """After a reply the output limit cut in a tool call (its calls answered): go on, so the
        model may make the call anew, at most ``continuations`` times; then one error, and the turn
        ends."""
        cut = [call.name for call in assembler.tool_calls() if call.cut]
        if not cut:
            return False
        self._cuts += 1
        if self._cuts <= continuations(self.ctx.retry):
            return False
        assert self._entry is not None  # the call that cut it was made
        said = notice(self._entry, assembler.output_limit, cut, again=self._cuts > 1)
        self._report(ErrorCode.PROVIDER_ERROR.value, said)
        return True

    def _report(self, code: str, message: str) -> None:
        self.ctx.events.emit(ErrorEvent(code=code, message=message, fatal=False))

    def _report_usage(self, assembler: MessageAssembler, entry: ModelEntry) -> None:
        if assembler.usage is None:
            return
        call = self.usage.add(assembler.usage, entry)
        if call.context_tokens is not None:
            self.ctx.transcript.note_context(call.context_tokens)
        self.ctx.events.emit(usage_event(call, self.ctx.models.window()))

    def _keep_partial(
        self, assembler: MessageAssembler, reason: StopReason, *, unrun: str, detail: str | None = None
    ) -> None:
        """Keep what arrived of an unfinished response, saying why it ended, and close its tool
        calls with ``unrun``."""
        if assembler.empty:
            return
        message = assembler.message()
        message.stop_reason = reason
        if detail:
            message.stop_detail = detail
        self.ctx.transcript.record_message(message, incomplete="error" if reason == "failed" else reason)
        self.ctx.events.emit(MessageComplete(message_id=message.id, message=message))
        for call in assembler.tool_calls():
            self.tool_runs.finish(call.id, refused(unrun), None)

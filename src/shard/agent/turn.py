"""The turn loop: ``drive → turn → (call the model → run its tools)*``.

One turn answers one user input. Before every model call the pending steers are delivered and a
pending model switch is applied; the turn ends when the model answers without tool calls and no steer
is waiting. Follow-ups queued meanwhile each start the next turn once this one has fully ended.

Abort is the turn task's cancellation. Each stage winds itself down on the way out — the partial
assistant message is kept (and reported), every tool call that will not get a real result gets an
"aborted" one so the transcript stays valid for the next request — and :func:`drive` closes the turn
with ``turn_end`` and ``status idle``.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from shard.agent.assembler import AssembledToolCall, MessageAssembler
from shard.agent.catalog import ModelEntry, cost
from shard.agent.permissions import gate
from shard.agent.providers.base import ProviderError, ProviderRequest, UsageReport
from shard.agent.providers.retry import stream_with_retries
from shard.agent.system_prompt import system_prompt
from shard.agent.tools.base import ToolFailure, ToolOutput
from shard.protocol.agents import Usage
from shard.protocol.codec import describe_validation_error
from shard.protocol.content import ContentBlock, ErrorContent, ImageBlock, Message, TextBlock
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.events import (
    ErrorEvent,
    MessageComplete,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    UsageEvent,
)
from shard.protocol.ids import new_id

if TYPE_CHECKING:
    from shard.agent.runtime import Runtime, UserInput

ABORTED = "Aborted by the user before this tool call ran."
CUT_OFF = "Not run: the model's response was cut off before it finished."


class _TurnUsage:
    def __init__(self) -> None:
        self.total: Usage | None = None

    def add(self, report: UsageReport, entry: ModelEntry) -> Usage:
        call = Usage(input=report.input, output=report.output, model=entry.id)
        for name in ("cache_read", "cache_write", "context_tokens"):
            value = getattr(report, name)
            if value is not None:
                setattr(call, name, value)
        price = cost(entry.model, report.input, report.output, report.cache_read, report.cache_write)
        if price is not None:
            call.cost = price
        if self.total is None:
            self.total = call.model_copy()
        else:
            t = self.total
            t.input += call.input
            t.output += call.output
            for name in ("cache_read", "cache_write", "cost"):
                value = getattr(call, name)
                if value is not None:
                    setattr(t, name, round((getattr(t, name) or 0) + value, 8))
            if call.context_tokens is not None:
                t.context_tokens = call.context_tokens
            t.model = entry.id
        return call


async def drive(rt: Runtime, first: UserInput) -> None:
    """Run turns until nothing is queued, then go idle. The runtime's turn task."""
    try:
        inp: UserInput | None = first
        while inp is not None and rt.fatal is None:
            completed = await _turn(rt, inp)
            if not completed:
                break
            if not rt.follow_ups and rt.fatal is None and rt.compaction_due():
                await _auto_compact(rt, "compacting")  # the default tier: as the agent goes idle
            inp = rt.follow_ups.popleft() if rt.follow_ups else None
    finally:
        rt.turn_task = None
        if rt.fatal is None:
            rt.set_status("idle")
        rt.idle.set()


async def _auto_compact(rt: Runtime, after: str) -> bool:
    """Run the pipeline for an automatic tier; a failure is reported, never fatal. True if it ran."""
    from shard.agent.compaction import compact

    rt.set_status("compacting")
    rt.compacting = True
    try:
        result = await compact(rt, rt.config.compaction.keep_recent_tokens)
        return bool(result.compacted)
    except ShardError as exc:
        rt.emit(ErrorEvent(code=exc.code.value, message=exc.message, fatal=False))
        return False
    finally:
        rt.compacting = False
        if after != "compacting":
            rt.set_status(after)  # type: ignore[arg-type]


async def _turn(rt: Runtime, inp: UserInput) -> bool:
    """One turn. Returns False when it was aborted (nothing further should run)."""
    turn_id = new_id("turn")
    usage = _TurnUsage()
    rt.set_status("streaming")
    rt.emit(TurnStart(turn_id=turn_id))
    ok = True
    try:
        _deliver(rt, inp)
        while True:
            while rt.steers:
                _deliver(rt, rt.steers.popleft())
            if rt.overflow_due():  # the emergency tier: the next call would not fit
                await _auto_compact(rt, "streaming")
            assembler = await _call_model(rt, usage)
            if assembler is None:
                ok = False
                break
            calls = assembler.tool_calls()
            if calls:
                await _run_tools(rt, calls)
            elif not rt.steers:
                break
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        _end(rt, turn_id, usage)
        return False
    except ShardError as exc:  # the session could not be written: nothing more can be trusted
        rt.fail(exc)
        ok = False
    if not ok:
        rt.failed_turns += 1
    _end(rt, turn_id, usage)
    return True


def _end(rt: Runtime, turn_id: str, usage: _TurnUsage) -> None:
    end = TurnEnd(turn_id=turn_id)
    if usage.total is not None:
        end.usage = usage.total
    rt.emit(end)
    rt.store.sync()
    rt.save_meta()


def _deliver(rt: Runtime, inp: UserInput) -> None:
    content: list[ContentBlock] = [TextBlock(text=inp.text)]
    for image in inp.images or []:
        content.append(ImageBlock(data=image.data, mime_type=image.mime_type))
    message = Message(id=new_id("msg"), role="user", content=content)
    rt.record_message(message)
    rt.emit(MessageComplete(message_id=message.id, message=message))


async def _call_model(rt: Runtime, usage: _TurnUsage) -> MessageAssembler | None:
    """One provider call, streamed. None when it failed (already reported). A provider's "context
    too long" answer, before anything streamed, compacts once and tries again."""
    for attempt in (1, 2):
        try:
            return await _call_once(rt, usage, overflow_retry=attempt == 1)
        except _Overflow:
            if not await _auto_compact(rt, "streaming"):
                break
    rt.emit(
        ErrorEvent(
            code=ErrorCode.PROVIDER_ERROR.value, message="the context is too long for the model", fatal=False
        )
    )
    return None


class _Overflow(Exception):
    pass


async def _call_once(rt: Runtime, usage: _TurnUsage, *, overflow_retry: bool) -> MessageAssembler | None:
    try:
        entry, provider = rt.take_provider()
    except ShardError as exc:
        rt.emit(ErrorEvent(code=ErrorCode.PROVIDER_ERROR.value, message=exc.message, fatal=False))
        return None
    request = ProviderRequest(
        model=entry.model.id,
        system=system_prompt(rt.cwd, rt.modes.active, list(rt.tools)),
        messages=list(rt.model_view),
        tools=[t.spec() for t in rt.tools.values()],
        reasoning=rt.reasoning if entry.has_reasoning else None,
        call_index=rt.assistant_messages,
    )
    assembler = MessageAssembler(new_id("msg"))

    def on_retry(detail: str | None) -> None:
        rt.set_status("streaming", detail)

    rt.streaming = assembler
    try:
        async with aclosing(stream_with_retries(provider, request, rt.config.retry, on_retry)) as stream:
            async for event in stream:
                delta = assembler.feed(event)
                if delta is not None:
                    rt.emit(delta)
        rt.streaming = None  # before message_complete: a later sync holds the message in its window
    except asyncio.CancelledError:
        rt.streaming = None
        _keep_partial(rt, assembler, incomplete="aborted", unrun=ABORTED)
        raise
    except Exception as exc:  # any provider failure ends this turn, never the agent
        rt.streaming = None
        error = (
            exc
            if isinstance(exc, ProviderError)
            else ProviderError(f"the provider failed unexpectedly: {type(exc).__name__}: {exc}")
        )
        if error.context_overflow and assembler.empty and overflow_retry:
            raise _Overflow from None
        _keep_partial(rt, assembler, incomplete="error", unrun=CUT_OFF)
        _report_usage(rt, usage, assembler, entry)
        rt.emit(ErrorEvent(code=error.code.value, message=error.message, fatal=False))
        return None
    extra: dict[str, Any] = {"stop_reason": assembler.stop or "end_turn", "model": entry.id}
    if assembler.usage is not None:
        extra["usage"] = _usage_dict(assembler.usage)
    message = assembler.message()
    rt.record_message(message, **extra)
    rt.emit(MessageComplete(message_id=message.id, message=message))
    _report_usage(rt, usage, assembler, entry)
    return assembler


def _usage_dict(report: UsageReport) -> dict[str, int]:
    return {k: v for k in report.__slots__ if (v := getattr(report, k)) is not None}


def _report_usage(rt: Runtime, usage: _TurnUsage, assembler: MessageAssembler, entry: ModelEntry) -> None:
    if assembler.usage is None:
        return
    call = usage.add(assembler.usage, entry)
    if call.context_tokens is not None:
        rt.note_usage(call.context_tokens)
    rt.emit(UsageEvent(**call.to_wire()))


def _keep_partial(rt: Runtime, assembler: MessageAssembler, *, incomplete: str, unrun: str) -> None:
    """Keep what arrived of an unfinished response, and close its tool calls with ``unrun``."""
    if assembler.empty:
        return
    message = assembler.message()
    rt.record_message(message, incomplete=incomplete)
    rt.emit(MessageComplete(message_id=message.id, message=message))
    for call in assembler.tool_calls():
        _finish_call(rt, call.id, ToolOutput(ErrorContent(message=unrun), is_error=True), None)


async def _run_tools(rt: Runtime, calls: list[AssembledToolCall]) -> None:
    remaining = list(calls)
    try:
        while remaining:
            call = remaining[0]
            started = time.monotonic()
            output = await _run_one(rt, call)
            remaining.pop(0)
            _finish_call(rt, call.id, output, (time.monotonic() - started) * 1000)
    except asyncio.CancelledError:
        for call in remaining:
            _finish_call(rt, call.id, ToolOutput(ErrorContent(message=ABORTED), is_error=True), None)
        raise


async def _run_one(rt: Runtime, call: AssembledToolCall) -> ToolOutput:
    def refused(text: str) -> ToolOutput:
        return ToolOutput(ErrorContent(message=text), is_error=True)

    if call.args_error is not None:
        return refused(f"Could not run '{call.name}': {call.args_error}.")
    tool = rt.tools.get(call.name)
    if tool is None:
        return refused(f"There is no tool named '{call.name}'. Tools: {', '.join(rt.tools)}.")
    try:
        args = tool.parse(call.args)
    except ValidationError as exc:
        return refused(f"Invalid arguments for '{call.name}': {describe_validation_error(exc)}.")
    ctx = rt.tool_context(call.id)
    try:
        verdict = await gate.check(rt, tool, args, call.args, ctx)
        if not verdict.allowed:
            return refused(verdict.reason or "Permission denied.")
        event = ToolCall(tool_call_id=call.id, name=call.name, args=call.args, read_only=tool.read_only)
        render = tool.start_render(args, ctx)
    except ToolFailure as exc:  # e.g. an edit that cannot apply: nobody is asked to approve it
        return refused(str(exc))
    if render is not None:
        event.render = render
    rt.emit(event)
    try:
        return await tool.execute(args, ctx)
    except ToolFailure as exc:
        return refused(str(exc))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a crash inside the tool: report it, keep the agent going
        message = f"The '{call.name}' tool failed unexpectedly: {type(exc).__name__}: {exc}"
        rt.emit(ErrorEvent(code=ErrorCode.TOOL_ERROR.value, message=message, fatal=False))
        return refused(message)


def _finish_call(rt: Runtime, call_id: str, output: ToolOutput, duration_ms: float | None) -> None:
    fields: dict[str, Any] = {
        "tool_call_id": call_id,
        "content": output.content.to_wire(),
        "is_error": output.is_error,
    }
    if output.exit_code is not None:
        fields["exit_code"] = output.exit_code
    if duration_ms is not None:
        fields["duration_ms"] = round(duration_ms, 3)
    if output.images:
        fields["images"] = [image.to_wire() for image in output.images]
    rt.record("tool_result", entry_id=new_id("msg"), **fields)
    event = ToolResult(tool_call_id=call_id, content=output.content, is_error=output.is_error)
    if output.exit_code is not None:
        event.exit_code = output.exit_code
    if duration_ms is not None:
        event.duration_ms = round(duration_ms, 3)
    if output.render is not None:
        event.render = output.render
    if output.images:
        event.images = output.images  # additive field: the pictures the model was shown
    rt.emit(event)

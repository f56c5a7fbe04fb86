"""Running one reply's tool calls, in order: each through the gate, then ``tool_call`` → execute →
``tool_result`` — every step recorded in the session before the event that reports it, so that a
client that reloads shows the card a live one showed (the ``tool_start`` entry keeps the
``tool_call`` event's RenderDescriptor, ``read_only`` and ``sandboxed``; the ``tool_result`` entry
its exit code, duration and RenderDescriptor).

A call that is refused (cut by the output limit, unknown tool, arguments that do not parse, the
mode, the gate) never starts: no ``tool_call``, an error ``tool_result`` without a duration. A
tool's ``duration_ms`` is the time it ran — from when it starts, after the gate allowed it — so a
wait for a person's permission answer is not in it. A cancellation (abort, shutdown) gives every
call that will not get a real result one saying why (:data:`UNRUN`), so the transcript stays valid
for the next request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from shard.agent.assembler import AssembledToolCall
from shard.agent.output_limit import CUT_CALL
from shard.agent.permissions.gate import Deny, Verdict
from shard.agent.sink import EventSink
from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.transcript import Transcript
from shard.protocol.agent_events import ErrorEvent, ToolCall, ToolResult
from shard.protocol.codec import describe_validation_error
from shard.protocol.content import ErrorContent
from shard.protocol.errors import ErrorCode
from shard.protocol.ids import new_id

ABORTED = "Aborted by the user before this tool call ran."
ABORTED_RUNNING = "Aborted by the user while this tool call ran: it may have done part of its work."
INTERRUPTED = "Not run: the agent was shut down before this tool call ran."
INTERRUPTED_RUNNING = "The agent was shut down while this tool call ran: it may have done part of its work."
# A cancelled call's result, by why the work was cancelled: (not started yet, running)
UNRUN = {"aborted": (ABORTED, ABORTED_RUNNING), "interrupted": (INTERRUPTED, INTERRUPTED_RUNNING)}

Approve = Callable[[Tool[Any], ToolParams, dict[str, Any], ToolContext], Awaitable[Verdict]]


@dataclass(slots=True)
class Stopping:
    """Why the work is being cancelled, set just before the cancel: a client's ``abort`` (the reply
    ends ``aborted``), or the runtime shutting down (SIGTERM, its client gone: ``interrupted``)."""

    cause: Literal["aborted", "interrupted"] = "aborted"


def refused(text: str) -> ToolOutput:
    return ToolOutput(ErrorContent(message=text), is_error=True)


class ToolRuns:
    """The tool calls of one reply, run one after the other."""

    def __init__(
        self,
        transcript: Transcript,
        events: EventSink,
        tools: dict[str, Tool[Any]],
        approve: Approve,
        tool_context: Callable[[str], ToolContext],
        stopping: Stopping,
    ) -> None:
        self._transcript = transcript
        self._events = events
        self._tools = tools
        self._approve = approve
        self._tool_context = tool_context
        self._stopping = stopping
        self._executing: str | None = None  # the tool call whose execute() has begun

    async def run(self, calls: list[AssembledToolCall]) -> None:
        remaining = list(calls)
        try:
            while remaining:
                call = remaining[0]
                output, duration_ms = await self._run_one(call)
                remaining.pop(0)
                self.finish(call.id, output, duration_ms)
        except asyncio.CancelledError:
            before, running = UNRUN[self._stopping.cause]
            for call in remaining:
                self.finish(call.id, refused(running if call.id == self._executing else before), None)
            raise

    async def _run_one(self, call: AssembledToolCall) -> tuple[ToolOutput, float | None]:
        """The call's output, and how long the tool ran (None: it never started)."""
        if call.cut:  # never run half a call: its arguments stop where the output limit did
            return refused(CUT_CALL), None
        if call.args_error is not None:
            return refused(f"Could not run '{call.name}': {call.args_error}."), None
        tool = self._tools.get(call.name)
        if tool is None:
            return refused(f"There is no tool named '{call.name}'. Tools: {', '.join(self._tools)}."), None
        try:
            args = tool.parse(call.args)
        except ValidationError as exc:
            return refused(f"Invalid arguments for '{call.name}': {describe_validation_error(exc)}."), None
        tool_ctx = self._tool_context(call.id)
        try:
            verdict = await self._approve(tool, args, call.args, tool_ctx)
            if isinstance(verdict, Deny):
                return refused(verdict.reason), None
            event = ToolCall(tool_call_id=call.id, name=call.name, args=call.args, read_only=tool.read_only)
            if tool_ctx.sandbox is not None and tool_ctx.sandbox.active:
                event.sandboxed = tool.confined(args, tool_ctx)
            render = tool.start_render(args, tool_ctx)
        except ToolFailure as exc:  # e.g. an edit that cannot apply: nobody is asked to approve it
            return refused(str(exc)), None
        if render is not None:
            event.render = render
        shown = {k: v for k, v in event.to_wire().items() if k in ("render", "read_only", "sandboxed")}
        self._transcript.record("tool_start", tool_call_id=call.id, **shown)
        self._events.emit(event)
        self._executing = call.id  # from here an abort cuts the call short rather than prevents it
        started = time.monotonic()  # the tool's own time: any wait for an answer is over
        try:
            output = await tool.execute(args, tool_ctx)
        except ToolFailure as exc:
            output = refused(str(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crash inside the tool: report it, keep the agent going
            message = f"The '{call.name}' tool failed unexpectedly: {type(exc).__name__}: {exc}"
            self._events.emit(ErrorEvent(code=ErrorCode.TOOL_ERROR.value, message=message, fatal=False))
            output = refused(message)
        return output, (time.monotonic() - started) * 1000

    def finish(self, call_id: str, output: ToolOutput, duration_ms: float | None) -> None:
        """Record the call's result, then report it (``tool_result``)."""
        event = ToolResult(tool_call_id=call_id, content=output.content, is_error=output.is_error)
        if output.exit_code is not None:
            event.exit_code = output.exit_code
        if duration_ms is not None:
            event.duration_ms = round(duration_ms, 3)
        if output.render is not None:
            event.render = output.render
        fields = {k: v for k, v in event.to_wire().items() if k not in ("type", "agent_id")}
        if output.images:
            fields["images"] = [image.to_wire() for image in output.images]
        entry = self._transcript.record("tool_result", entry_id=new_id("msg"), **fields)
        event.message_id = entry["id"]  # the message that holds this result in the window
        if output.images:
            event.images = output.images  # additive field: the pictures the model was shown
        self._events.emit(event)

"""The ``anthropic`` provider: the Messages API, streamed, through the official SDK.

Request side (:func:`build_params`, pure): calls and results are paired (``pairing.py``: no call
without its result), consecutive same-role messages are merged (tool results
first in a user turn, as the API requires); thinking blocks go back with their signature (unsigned
ones — from another provider — are dropped); images become base64 image blocks; two prompt-cache
breakpoints mark the system prompt (which caches the tools with it) and the conversation's last block;
the reasoning level becomes manual thinking (``budget_tokens``) or adaptive thinking with
``output_config.effort``.

Response side (:class:`AnthropicFold`, pure): the SDK's raw stream events fold into the normalized
events — text, thinking (+ signature), tool_use starts and ``input_json_delta`` fragments, usage
(input, output, cache read, cache write) and the stop reason. A stream that ends without
``message_stop`` is a cut: the call fails and what arrived is kept, marked incomplete.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from shard.agent.catalog import ModelEntry
from shard.agent.providers.base import (
    ProviderError,
    ProviderEvent,
    ProviderRequest,
    Stop,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from shard.agent.providers.pairing import paired
from shard.agent.providers.sdk_provider import SdkProvider
from shard.protocol.content import (
    ErrorContent,
    ImageBlock,
    JsonContent,
    Message,
    TextBlock,
    TextContent,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)

DEFAULT_MAX_TOKENS = 16_384
_EPHEMERAL = {"type": "ephemeral"}
_STOP = {"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens", "refusal": "refusal"}


class AnthropicProvider(SdkProvider):
    sdk_module = "anthropic"
    client_class = "AsyncAnthropic"

    async def events(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        params = build_params(request, self.entry)
        fold = AnthropicFold(max_tokens=params["max_tokens"])
        client = await self.client()
        stream = await client.messages.create(**params)
        async with stream:
            async for event in stream:
                for out in fold.feed(event):
                    yield out
        if not fold.finished:
            raise ProviderError(
                f"{self.name}: the stream ended before the message was complete", retryable=True
            )


_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})


def _thinking(entry: ModelEntry, level_id: str | None) -> tuple[int, str | None]:
    """(manual thinking budget, adaptive effort) for a reasoning level; (0, None): no thinking.

    A level with ``budget_tokens`` > 0 asks for manual extended thinking with that budget; one with an
    ``effort`` (or whose id is an effort name) asks for adaptive thinking at that effort.
    """
    for lv in entry.model.reasoning_levels:
        if lv.id == level_id:
            if lv.budget_tokens:
                return lv.budget_tokens, None
            if lv.budget_tokens == 0:
                return 0, None
            effort = lv.effort or (lv.id if lv.id in _EFFORTS else None)
            return 0, effort
    return 0, None


def build_params(request: ProviderRequest, entry: ModelEntry) -> dict[str, Any]:
    """The ``messages.create`` keyword arguments for a request (pure)."""
    budget, effort = _thinking(entry, request.reasoning)
    max_tokens = request.max_output_tokens or entry.model.max_output_tokens or DEFAULT_MAX_TOKENS
    if budget:
        max_tokens = max(max_tokens, budget + 4096)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}],
        "messages": convert_messages(request.messages),
        "stream": True,
    }
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    if budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif effort:
        params["thinking"] = {"type": "adaptive"}
        params["output_config"] = {"effort": effort}
    return params


def convert_messages(messages: list[Message]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in paired(messages):  # every tool_use answered in the next user turn (else a 400)
        blocks = [b for b in (_block(block) for block in message.content) if b is not None]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": message.role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":  # tool results must open the user turn that answers tool calls
            turn["content"].sort(key=lambda b: b["type"] != "tool_result")
    if turns:
        last = dict(turns[-1]["content"][-1])
        last["cache_control"] = _EPHEMERAL
        turns[-1]["content"][-1] = last
    return turns


def _block(block: Any) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ThinkingBlock):
        signature = (block.model_extra or {}).get("signature")
        if not signature:
            return None
        return {"type": "thinking", "thinking": block.text, "signature": signature}
    if isinstance(block, ToolCallBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.args}
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_call_id}
        images = (block.model_extra or {}).get("images") or []
        if images:
            out["content"] = [{"type": "text", "text": _result_text(block)}] + [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": i["mime_type"], "data": i["data"]},
                }
                for i in images
            ]
        else:
            out["content"] = _result_text(block)
        if block.is_error:
            out["is_error"] = True
        return out
    if isinstance(block, ImageBlock):
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
        }
    return None


def _result_text(block: ToolResultBlock) -> str:
    content = block.content
    if isinstance(content, TextContent):
        return content.text or "(no output)"
    if isinstance(content, ErrorContent):
        return content.message
    assert isinstance(content, JsonContent)
    return orjson.dumps(content.value).decode()


class AnthropicFold:
    """Raw Messages-API stream events → normalized events. Works on the SDK's event objects."""

    def __init__(self, max_tokens: int | None = None) -> None:
        self.max_tokens = max_tokens  # what the request asked for: named when the reply is cut at it
        self.finished = False
        self._input = 0
        self._cache_read: int | None = None
        self._cache_write: int | None = None
        self._output = 0
        self._stop: StopReason = "end_turn"
        self._tool_blocks: dict[int, str] = {}

    def feed(self, event: Any) -> list[ProviderEvent]:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self._usage(getattr(event.message, "usage", None))
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                self._tool_blocks[event.index] = block.id
                return [ToolCallStart(id=block.id, name=block.name)]
            if block.type == "text" and getattr(block, "text", ""):
                return [TextDelta(block.text)]
            if block.type == "thinking" and getattr(block, "thinking", ""):
                return [ThinkingDelta(block.thinking)]
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                return [TextDelta(delta.text)]
            if delta.type == "thinking_delta":
                return [ThinkingDelta(delta.thinking)]
            if delta.type == "signature_delta":
                return [ThinkingDelta("", signature=delta.signature)]
            if delta.type == "input_json_delta":
                return [ToolCallArgs(delta.partial_json, call_id=self._tool_blocks.get(event.index))]
        elif kind == "message_delta":
            self._usage(getattr(event, "usage", None))
            reason = getattr(event.delta, "stop_reason", None)
            if reason:
                self._stop = _STOP.get(reason, "other")  # type: ignore[assignment]
        elif kind == "message_stop":
            self.finished = True
            return [
                UsageReport(
                    input=self._input,
                    output=self._output,
                    cache_read=self._cache_read,
                    cache_write=self._cache_write,
                    context_tokens=self._input
                    + (self._cache_read or 0)
                    + (self._cache_write or 0)
                    + self._output,
                ),
                Stop(self._stop, self.max_tokens if self._stop == "max_tokens" else None),
            ]
        return []

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        if getattr(usage, "input_tokens", None) is not None:
            self._input = usage.input_tokens
        if getattr(usage, "output_tokens", None) is not None:
            self._output = usage.output_tokens
        if getattr(usage, "cache_read_input_tokens", None) is not None:
            self._cache_read = usage.cache_read_input_tokens
        if getattr(usage, "cache_creation_input_tokens", None) is not None:
            self._cache_write = usage.cache_creation_input_tokens

"""The ``scripted`` provider: plays a JSON script of assistant responses — offline, deterministic.

It is for tests, demos and client development, and says so wherever it is listed. A script::

    {
      "description": "what this script shows",
      "loop": false,
      "steps": [
        {
          "blocks": [
            {"type": "thinking", "text": "..."},
            {"type": "text", "text": "Reading the config..."},
            {"type": "tool_call", "name": "read", "args": {"path": "config.json"}},
            {"type": "pause", "ms": 200}
          ],
          "usage": {"input": 120, "output": 30},
          "chunk": 12, "delay_ms": 0,
          "stall": false,
          "error": null,
          "stop": null
        }
      ]
    }

Each provider call plays one step: the step whose index is the number of assistant messages the
session already holds (compaction does not change it), so a restored session continues where it
stopped and the same history always gets the same answer. Past the last step the call fails, unless
``loop`` is true. Within a step, text and thinking are streamed ``chunk`` characters at a time (tool
arguments likewise, as JSON text), ``delay_ms`` apart; ``pause`` waits; ``stall`` keeps the stream
open until it is cancelled; ``error`` fails the call after the blocks. A text block with ``"stamp":
true`` starts each piece with the system's monotonic clock in nanoseconds and ``|`` (taken as the
piece is handed to the runtime), so a benchmark can tell how long the piece took to reach a client
on the same machine (``bench/scale.py``). ``usage`` defaults to an
estimate of 4 characters a token of the request (system prompt, messages and tool schemas, as a
server counts them). If the provider entry has ``record``, every request is appended
there as one JSON line. Summary requests (compaction) answer with the script's ``summary`` text (or
a digest of the span), after ``summary_delay_ms``, or fail with ``summary_error``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson

from shard._home import open_private
from shard.agent.providers.base import (
    ProviderError,
    ProviderEvent,
    ProviderRequest,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from shard.protocol.ids import new_id

_BLOCK_TYPES = {"text", "thinking", "tool_call", "pause"}


class ScriptError(ValueError):
    pass


def load_script(path: Path) -> dict[str, Any]:
    """Read and check a script file; raises ScriptError naming what is wrong."""
    try:
        script = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise ScriptError(f"script file {path} does not exist") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ScriptError(f"script file {path} cannot be read: {exc}") from None
    if not isinstance(script, dict) or not isinstance(script.get("steps"), list):
        raise ScriptError(f"script {path} must be an object with a 'steps' array")
    for i, step in enumerate(script["steps"]):
        if not isinstance(step, dict) or not isinstance(step.get("blocks", []), list):
            raise ScriptError(f"script {path}: steps[{i}] must be an object with a 'blocks' array")
        for j, block in enumerate(step.get("blocks", [])):
            if not isinstance(block, dict) or block.get("type") not in _BLOCK_TYPES:
                raise ScriptError(
                    f"script {path}: steps[{i}].blocks[{j}].type must be one of "
                    + ", ".join(sorted(_BLOCK_TYPES))
                )
            if block["type"] == "tool_call" and not isinstance(block.get("name"), str):
                raise ScriptError(f"script {path}: steps[{i}].blocks[{j}] needs a tool 'name'")
    return script


class ScriptedProvider:
    def __init__(self, name: str, script_path: Path, record_path: Path | None = None) -> None:
        self.name = name
        self.script_path = script_path
        self.script = load_script(script_path)
        self.record_path = record_path

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        self._record(request)
        steps: list[dict[str, Any]] = self.script["steps"]
        if request.purpose == "summary":
            async for ev in self._summary(request):
                yield ev
            return
        index = request.call_index
        if index is None:
            index = sum(1 for m in request.messages if m.role == "assistant")
        if index >= len(steps):
            if not self.script.get("loop") or not steps:
                raise ProviderError(
                    f"scripted provider: script {self.script_path.name} has no step {index} "
                    f"(it has {len(steps)})"
                )
            index %= len(steps)
        step = steps[index]
        chunk = max(1, int(step.get("chunk", 12)))
        delay = float(step.get("delay_ms", 0)) / 1000
        output_chars = 0
        has_tool_call = False
        for block in step.get("blocks", []):
            kind = block["type"]
            if kind == "pause":
                await asyncio.sleep(float(block.get("ms", 0)) / 1000)
                continue
            if kind == "tool_call":
                has_tool_call = True
                yield ToolCallStart(id=block.get("id") or new_id("tc"), name=block["name"])
                args = orjson.dumps(block.get("args", {})).decode()
                output_chars += len(args)
                for piece in _pieces(args, chunk):
                    await _pace(delay)
                    yield ToolCallArgs(piece)
                continue
            text = str(block.get("text", ""))
            output_chars += len(text)
            stamp = kind == "text" and block.get("stamp") is True
            for piece in _pieces(text, chunk):
                await _pace(delay)
                if stamp:
                    piece = f"{time.monotonic_ns()}|{piece}"
                yield TextDelta(piece) if kind == "text" else ThinkingDelta(piece)
        if step.get("stall"):
            await asyncio.Event().wait()
        if step.get("error"):
            raise ProviderError(f"scripted provider: {step['error']}", retryable=False)
        yield _usage(step.get("usage"), request, output_chars)
        yield Stop(step.get("stop") or ("tool_use" if has_tool_call else "end_turn"))

    async def _summary(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        # A deterministic summary: the script's fixed text, or a digest of the span's messages.
        if self.script.get("summary_delay_ms"):
            await asyncio.sleep(float(self.script["summary_delay_ms"]) / 1000)
        if self.script.get("summary_error"):
            raise ProviderError(f"scripted provider: {self.script['summary_error']}")
        text = self.script.get("summary")
        if not isinstance(text, str):
            lines = []
            for m in request.messages:
                for b in m.content:
                    snippet = getattr(b, "text", None) or getattr(b, "name", None) or b.type
                    lines.append(f"- {m.role}: {str(snippet)[:80]}")
            text = "Summary of the earlier conversation:\n" + "\n".join(lines)
        yield TextDelta(text)
        yield _usage(None, request, len(text))
        yield Stop("end_turn")

    def _record(self, request: ProviderRequest) -> None:
        if self.record_path is None:
            return
        line = {
            "model": request.model,
            "purpose": request.purpose,
            "reasoning": request.reasoning,
            "system": request.system,
            "tools": [t.name for t in request.tools],
            "messages": [m.to_wire() for m in request.messages],
        }
        fd = open_private(self.record_path, os.O_WRONLY | os.O_APPEND)  # it holds the conversation
        try:
            os.write(fd, orjson.dumps(line) + b"\n")
        finally:
            os.close(fd)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or ([""] if text == "" else [])


async def _pace(delay: float) -> None:
    if delay > 0:
        await asyncio.sleep(delay)


def _usage(given: Any, request: ProviderRequest, output_chars: int) -> UsageReport:
    if isinstance(given, dict):
        inp, out = int(given.get("input", 0)), int(given.get("output", 0))
        return UsageReport(
            input=inp,
            output=out,
            cache_read=given.get("cache_read"),
            cache_write=given.get("cache_write"),
            context_tokens=given.get("context_tokens", inp + out),
        )
    request_chars = len(request.system) + sum(len(m.to_json()) for m in request.messages)
    request_chars += sum(len(orjson.dumps([t.name, t.description, t.parameters])) for t in request.tools)
    inp, out = request_chars // 4, max(1, output_chars // 4)
    return UsageReport(input=inp, output=out, context_tokens=inp + out)

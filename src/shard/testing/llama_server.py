"""A stand-in for llama.cpp's ``llama-server`` with a small context, and a deterministic model behind
it: for sessions that outgrow their window (tests, ``bench/small_window.py``).

It answers as the real server does (the shapes recorded in ``tests/agent/providers/fixtures/
llama-cpp/``):

* ``GET /v1/models`` — the model list, ``data[].meta.n_ctx`` the context it runs with;
* ``POST /v1/chat/completions`` — counts the request's tokens roughly (4 bytes of its JSON body a
  token); over ``n_ctx`` it answers HTTP 400 with llama.cpp's own ``exceed_context_size_error``
  body, otherwise it streams the model's reply in llama.cpp's chunks, with a usage chunk whose
  ``cached_tokens`` is the prefix shared with the previous request (llama.cpp keeps its KV cache);
* anything else — 404.

The model (:func:`reader`) reads the file a prompt names with the ``read`` tool, then says the
file's first line; asked for a summary (Shard's compaction), it writes one. Every request is kept in
``requests`` with its token count and status.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

# llama.cpp's answer to a prompt longer than its context, byte for byte (openai-overflow.txt).
OVERFLOW_BODY = (
    '{{"error":{{"code":400,"message":"request ({n} tokens) exceeds the available context size '
    '({n_ctx} tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":{n},'
    '"n_ctx":{n_ctx}}}}}'
)
_ID = "chatcmpl-shardtestllamaserver0000"
_NUMBERED = re.compile(r"^\s*\d+\s*[\t:│|]\s?")  # a line number the read tool put before a line


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model says: text, or one tool call."""

    text: str = ""
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Seen:
    tokens: int  # as the server counted them
    status: int
    summary: bool  # a compaction's summary request
    body: dict[str, Any]


Model = Callable[[dict[str, Any]], Reply]


def count_tokens(raw: bytes) -> int:
    return math.ceil(len(raw) / 4)


def reader(body: dict[str, Any]) -> Reply:
    """The deterministic model: ``read NAME`` → a read call; a read's result → its first line; a
    summary request → a summary."""
    messages = body.get("messages") or []
    system = messages[0].get("content", "") if messages else ""
    if isinstance(system, str) and system.startswith("You write the working memory"):
        return Reply(text="## Goal\n- Read the files the user names and say their first lines.\n")
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        content = str(last.get("content", ""))
        first = next((line for line in content.splitlines() if line.strip()), "")
        return Reply(text=f"The file begins: {_NUMBERED.sub('', first).strip()}")
    prompt = str(last.get("content", ""))
    name = next((w for w in prompt.split() if w.endswith(".txt")), None)
    if name is None:
        return Reply(text="Nothing to read.")
    return Reply(tool="read", args={"path": name})


class LlamaServer:
    """``await LlamaServer.start(n_ctx=8192)``; ``server.url`` is the base_url of an openai-kind
    provider; ``await server.close()``."""

    def __init__(self, n_ctx: int, model: Model, name: str) -> None:
        self.n_ctx = n_ctx
        self.model = model
        self.name = name
        self.requests: list[Seen] = []
        self._previous = b""
        self._runner: web.AppRunner | None = None
        self.port = 0

    @classmethod
    async def start(cls, n_ctx: int = 8192, model: Model = reader, name: str = "qwen") -> LlamaServer:
        server = cls(n_ctx, model, name)
        app = web.Application()
        app.router.add_get("/v1/models", server._models)
        app.router.add_post("/v1/chat/completions", server._chat)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server._runner = runner
        server.port = runner.addresses[0][1]
        return server

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def models_body(self) -> dict[str, Any]:
        """``/v1/models`` as llama-server answers it (models.json), for this model and context."""
        meta = {"vocab_type": 2, "n_vocab": 49152, "n_ctx": self.n_ctx, "n_ctx_train": 32768, "n_embd": 576}
        return {
            "models": [
                {"name": self.name, "model": self.name, "type": "model", "capabilities": ["completion"]}
            ],
            "object": "list",
            "data": [
                {
                    "id": self.name,
                    "aliases": [self.name],
                    "object": "model",
                    "owned_by": "llamacpp",
                    "meta": meta,
                }
            ],
        }

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(self.models_body())

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = orjson.loads(raw)
        tokens = count_tokens(raw)
        messages = body.get("messages") or [{}]
        summary = str(messages[0].get("content", "")).startswith("You write the working memory")
        if tokens > self.n_ctx:
            self.requests.append(Seen(tokens, 400, summary, body))
            text = OVERFLOW_BODY.format(n=tokens, n_ctx=self.n_ctx)
            return web.Response(
                status=400, body=text.encode(), content_type="application/json", charset="utf-8"
            )
        self.requests.append(Seen(tokens, 200, summary, body))
        cached = count_tokens(raw[: _common_prefix(raw, self._previous)])
        self._previous = raw
        reply = self.model(body)
        response = web.StreamResponse(status=200, headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        call_id = f"call-{len(self.requests):04d}"
        for chunk in _chunks(reply, self.name, tokens, min(cached, tokens - 1), call_id):
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def _common_prefix(a: bytes, b: bytes) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _chunks(reply: Reply, model: str, prompt: int, cached: int, call_id: str) -> list[dict[str, Any]]:
    """The reply as llama-server streams it: a role chunk, the content or tool call, the finish,
    then usage (openai-tool-call-stream.txt)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"finish_reason": finish, "index": 0, "delta": delta}
        return {
            "choices": [choice],
            "created": 1796137607,
            "id": _ID,
            "model": model,
            "object": "chat.completion.chunk",
        }

    out = [chunk({"role": "assistant", "content": None})]
    if reply.tool is not None:
        arguments = orjson.dumps(reply.args).decode()
        call = {"index": 0, "id": call_id, "type": "function", "function": {"name": reply.tool}}
        out.append(
            chunk({"tool_calls": [{**call, "function": {"name": reply.tool, "arguments": arguments}}]})
        )
        out.append(chunk({}, "tool_calls"))
        completion = math.ceil(len(arguments) / 4) + 8
    else:
        out.extend(chunk({"content": reply.text[i : i + 16]}) for i in range(0, len(reply.text), 16))
        out.append(chunk({}, "stop"))
        completion = max(1, math.ceil(len(reply.text) / 4))
    usage = {
        "completion_tokens": completion,
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    out.append(
        {
            "choices": [],
            "created": 1796137607,
            "id": _ID,
            "model": model,
            "object": "chat.completion.chunk",
            "usage": usage,
        }
    )
    return out


def write_notes(project: Path, count: int, lines: int = 110) -> list[str]:
    """``notes_01.txt`` … in ``project``: ``lines`` lines each (110: ~1,600 tokens in a request)."""
    project.mkdir(parents=True, exist_ok=True)
    names = []
    for n in range(1, count + 1):
        name = f"notes_{n:02d}.txt"
        text = "".join(f"{name} line {i:04d}: notes kept for the small-window test\n" for i in range(lines))
        (project / name).write_text(text)
        names.append(name)
    return names

"""A local OpenAI-compatible server playing a two-turn tool task, in the real Chat Completions SSE
shape: when the conversation's last message is not a tool result it streams a call of the request's
file-reading tool (turn 1); after the tool result it streams a short answer (turn 2).

The tool is picked from the request's own ``tools`` (the first whose name says "read", then "view"
or "cat"), and its path argument from that tool's parameter schema, so other agent CLIs put beside
Shard (``bench/peers.py --peer``) get a call they can run.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

ANSWER = "The notes say: bench."
READ_HINTS = ("read", "view", "cat", "open")
PATH_HINTS = ("path", "file_path", "filepath", "filePath", "file", "filename", "absolute_path")


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def read_call(tools: list[dict[str, Any]], path: str) -> tuple[str, str]:
    """The tool's name and JSON arguments reading ``path`` (pure)."""
    functions = [t.get("function") or {} for t in tools]
    for hint in READ_HINTS:
        for fn in functions:
            if hint in str(fn.get("name", "")).lower():
                props = (fn.get("parameters") or {}).get("properties") or {}
                key = next((k for k in PATH_HINTS if k in props), next(iter(props), "path"))
                return str(fn["name"]), json.dumps({key: path})
    return "read", json.dumps({"path": path})


class ToolServer:
    def __init__(self, path: str) -> None:
        self.path = path  # what turn 1 asks the tool to read
        self.first_request_at: float | None = None
        self.requests = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        self.first_request_at = self.first_request_at or time.perf_counter()
        self.requests += 1
        body = await request.json()
        messages = body.get("messages") or []
        last = messages[-1]["role"] if messages else "user"
        if last == "tool":
            chunks = [_chunk({"role": "assistant", "content": ANSWER}), _chunk({}, "stop")]
        else:
            name, args = read_call(body.get("tools") or [], self.path)
            call = {"index": 0, "id": f"call_{self.requests}", "type": "function"}
            call["function"] = {"name": name, "arguments": args}
            chunks = [
                _chunk({"role": "assistant", "tool_calls": [call]}),
                _chunk({}, "tool_calls"),
            ]
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for chunk in chunks:
            await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        usage = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}  # fmt: skip
        await resp.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
        return resp


async def start(server: ToolServer) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(server.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port: int = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port

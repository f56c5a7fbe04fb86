"""A local stand-in for the Anthropic and OpenAI HTTP APIs: it replays recorded SSE transcripts.

The server answers ``POST /v1/messages`` (Anthropic Messages) and ``POST /v1/chat/completions``
(OpenAI Chat Completions) from a script of replies, one reply per request, in order, whatever the
path; it records every request it receives (path, headers, JSON body). A request that finds the script
empty gets a 500 and is recorded too, so a test that counts requests sees stray retries.

Replies:

* :class:`Stream` — 200 ``text/event-stream``: a fixture file (or raw text), written one SSE event at a
  time; ``events=N`` stops after N events and ends the response cleanly (a truncated stream), and
  ``cut_after=N`` writes N events and then closes the connection abruptly (a dropped stream);
  ``hold_after=N`` writes N events, then waits for the ``release`` event before the rest (a stream
  still in flight, for commands sent mid-stream).
* :class:`Json` — 200 ``application/json``: a whole ``chat.completion`` (a fixture file or a dict),
  as llama.cpp's ``llama-server`` and LiteLLM proxies may answer a *streaming* request. The
  ``*.json`` fixtures follow those servers' own serializers (llama.cpp ``to_json_oaicompat_chat``
  with its ``timings``; LiteLLM's ``ModelResponse`` with its null fields), written from their source
  rather than captured from a running server.
* :class:`Fail` — an HTTP error status with a JSON body and optional headers (``retry-after``…).
* :class:`Raw` — a status, a content type and a body sent exactly as given; :func:`recorded` makes one
  from a recorded answer (``fixtures/llama-cpp/*.txt``: the request, then ``HTTP <status>``, its
  content type and the body exactly as the real server sent it), so a test replays it byte for byte.

A runtime asks a server without ``context_window`` in config.toml for its window (``/v1/models``,
Ollama's ``/api/ps`` and ``/api/show``, LM Studio's ``/api/v0/models/…``): those requests get a 404
and are kept apart in ``probes``, so ``requests`` holds only the model calls a test counts (``arrivals``
says in which order the two kinds came).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    # imported where the server starts and answers instead: daemon, CLI and TUI test modules import
    # this one at their top, and every xdist worker imports every test module to collect
    from aiohttp import web

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    """The text of ``fixtures/<name>`` (e.g. ``"anthropic/text.sse"``)."""
    return (FIXTURES / name).read_text()


def sse_events(text: str) -> list[str]:
    """Split an SSE transcript into its events (each with its terminating blank line)."""
    return [block + "\n\n" for block in text.split("\n\n") if block.strip()]


@dataclass
class Stream:
    body: str  # a fixture name ("openai/text.sse") or raw SSE text (contains "data:")
    events: int | None = None  # write only the first N events, then end the response cleanly
    cut_after: int | None = None  # write the first N events, then drop the connection
    hold_after: int | None = None  # write the first N events, then wait for ``release``
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def text(self) -> str:
        return self.body if "data:" in self.body else fixture(self.body)


@dataclass
class Fail:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Json:
    body: str | dict[str, Any]  # a fixture name ("openai/litellm_text.json") or the object itself

    def bytes(self) -> bytes:
        return orjson.dumps(self.body) if isinstance(self.body, dict) else fixture(self.body).encode()


@dataclass
class Raw:
    status: int
    content_type: str
    body: bytes


def recorded(name: str) -> Raw:
    """The answer recorded in ``fixtures/<name>`` (``"llama-cpp/openai-overflow.txt"``), byte for
    byte; a ``.json`` fixture is a body that was sent as ``200 application/json``."""
    data = (FIXTURES / name).read_bytes()
    if name.endswith(".json"):
        return Raw(200, "application/json; charset=utf-8", data)
    _request, _, answer = data.partition(b"\n\nHTTP ")
    head, _, body = answer.partition(b"\n\n")
    status, *headers = head.decode().split("\n")
    fields = dict(line.split(": ", 1) for line in headers)
    return Raw(int(status), fields["content-type"], body)


Reply = Stream | Fail | Json | Raw


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


class ProviderServer:
    """``await ProviderServer.start()``; ``server.replies.extend([...])``; ``await server.close()``."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.probes: list[str] = []  # the window requests (answered 404), by path
        self.arrivals: list[str] = []  # "probe" and "request", in the order they came
        self._runner: web.AppRunner | None = None
        self._held: list[Stream] = []
        self.port = 0

    @classmethod
    async def start(cls) -> ProviderServer:
        from aiohttp import web

        server = cls()
        app = web.Application()
        app.router.add_post("/v1/messages", server._handle)
        app.router.add_post("/v1/chat/completions", server._handle)
        app.router.add_route("*", "/{tail:.*}", server._unexpected)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server._runner = runner
        server.port = runner.addresses[0][1]
        return server

    async def close(self) -> None:
        for stream in self._held:  # a test that failed mid-hold must not leave a handler waiting
            stream.release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def anthropic_url(self) -> str:
        """The base_url the Anthropic SDK wants (it appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The base_url the OpenAI SDK wants (it appends ``/chat/completions``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def _record(self, request: web.Request, raw: bytes) -> None:
        try:
            body = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            body = raw.decode(errors="replace")
        self.requests.append(Received(request.path, dict(request.headers), body))
        self.arrivals.append("request")

    async def _unexpected(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if request.path.endswith("/models") or request.path.startswith("/api/"):
            self.probes.append(request.path)
            self.arrivals.append("probe")
            return web.json_response({"error": {"message": "not here"}}, status=404)
        self._record(request, await request.read())
        return web.json_response({"error": {"message": f"no route {request.path}"}}, status=404)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        self._record(request, await request.read())
        if not self.replies:
            return web.json_response(
                {"error": {"type": "api_error", "message": "the test script has no reply left"}}, status=500
            )
        reply = self.replies.popleft()
        if isinstance(reply, Fail):
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        if isinstance(reply, Json):
            return web.Response(body=reply.bytes(), content_type="application/json")
        if isinstance(reply, Raw):
            headers = {"content-type": reply.content_type}
            return web.Response(body=reply.body, status=reply.status, headers=headers)
        events = sse_events(reply.text())
        limit = reply.cut_after if reply.cut_after is not None else reply.events
        response = web.StreamResponse(
            status=200, headers={"content-type": "text/event-stream", "cache-control": "no-cache"}
        )
        await response.prepare(request)
        for i, event in enumerate(events[:limit]):
            if i == reply.hold_after:
                self._held.append(reply)
                await reply.release.wait()
            await response.write(event.encode())
        if reply.cut_after is not None:
            # Drop the connection mid-body: the chunked response never gets its terminating chunk.
            assert request.transport is not None
            request.transport.close()
            return response
        await response.write_eof()
        return response

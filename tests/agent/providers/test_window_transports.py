"""The window's two ways to ask a server (issue 31): a local ``http://`` server is asked on the event
loop, any other through urllib on a daemon thread. Both send the same requests in the same order, the
loop's without importing urllib (about 13 ms of CPU before a one-shot's first request); both stop at
the first server that cannot be reached, read at most 1 MiB and follow no redirect."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from shard.agent.providers import window
from shard.agent.providers.window import _ask, _http, _LoopHttp, _ThreadHttp

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[int, list[tuple[str, str, dict[str, str], bytes]]]]:
    """A server answering 404 to everything, recording each request (headers by lowercased name)."""
    from aiohttp import web  # here: every xdist worker imports this module to collect the suite

    seen: list[tuple[str, str, dict[str, str], bytes]] = []

    async def handle(request: web.Request) -> web.Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        seen.append((request.method, request.path_qs, headers, await request.read()))
        return web.json_response({"error": "not found"}, status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield runner.addresses[0][1], seen
    await runner.cleanup()


@pytest.fixture
async def raw() -> AsyncIterator[Callable[[Handler], Awaitable[int]]]:
    servers: list[asyncio.Server] = []
    writers: list[asyncio.StreamWriter] = []

    async def start(handler: Handler) -> int:
        async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writers.append(writer)
            await handler(reader, writer)

        server = await asyncio.start_server(held, "127.0.0.1", 0)
        servers.append(server)
        return int(server.sockets[0].getsockname()[1])

    yield start
    for writer in writers:
        writer.close()
    for server in servers:
        server.close()
        await server.wait_closed()


def test_a_local_plain_server_is_asked_on_the_loop_and_any_other_through_urllib() -> None:
    assert isinstance(_http("http://127.0.0.1:11434/v1", {}, 2.0), _LoopHttp)
    assert isinstance(_http("http://localhost:8080", {}, 2.0), _LoopHttp)
    assert isinstance(_http("https://127.0.0.1:8443/v1", {}, 2.0), _ThreadHttp)
    assert isinstance(_http("http://models.example.com/v1", {}, 2.0), _ThreadHttp)


async def test_both_ways_send_the_same_requests_in_the_same_order(recorder) -> None:
    """``/v1/models`` first, then the other three together (in whatever order they arrive)."""
    port, seen = recorder
    headers = {"Authorization": "Bearer k-123"}
    sent = {}
    for name, http in (("loop", _LoopHttp(headers, 2.0)), ("urllib", _ThreadHttp(headers, 2.0, local=True))):
        seen.clear()
        assert await _ask("openai", f"http://127.0.0.1:{port}/v1", "qwen/coder:7b", http) is None
        sent[name] = [seen[0], *sorted(seen[1:], key=repr)]
    assert [(method, path) for method, path, _, _ in sent["loop"]] == [
        ("GET", "/v1/models"),
        ("GET", "/api/ps"),
        ("GET", "/api/v0/models/qwen%2Fcoder%3A7b"),
        ("POST", "/api/show"),
    ]
    assert sent["loop"] == sent["urllib"]
    assert sent["loop"][0][2]["authorization"] == "Bearer k-123"


async def test_a_server_that_never_answers_is_given_up_after_the_timeout(raw) -> None:
    arrived: list[bytes] = []
    never = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        arrived.append(await reader.readline())
        await never.wait()

    port = await raw(silent)
    http = _LoopHttp({}, 0.3)
    started = time.monotonic()
    assert await _ask("openai", f"http://127.0.0.1:{port}/v1", "m", http) is None
    assert http.unreachable
    assert time.monotonic() - started < 5
    assert arrived == [b"GET /v1/models HTTP/1.1\r\n"], "one question, then no more"
    never.set()


async def test_a_chunked_answer_is_read_and_an_endless_one_is_cut_at_a_mebibyte(raw) -> None:
    models = json.dumps({"data": [{"id": "m", "max_model_len": 32768}]}).encode()

    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in (models[:10], models[10:]):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    port = await raw(chunked)
    found = await _ask("openai", f"http://127.0.0.1:{port}/v1", "m", _LoopHttp({}, 2.0))
    assert found is not None
    assert (found.tokens, found.source) == (32768, "server")

    sent = 0

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"data": [')
        try:
            while sent < 8 << 20:
                writer.write(b" " * 65536)
                await writer.drain()
                sent += 65536
        except ConnectionError:
            pass
        writer.close()

    port = await raw(endless)
    http = _LoopHttp({}, 2.0)
    assert await http.get(f"http://127.0.0.1:{port}/v1/models") is None
    assert not http.unreachable
    assert sent < 8 << 20, "the reader stopped; the server was not read to its end"


def test_asking_a_local_server_imports_no_urllib(tmp_path) -> None:
    """In a fresh interpreter: a local server that says its window, asked as a runtime asks it."""
    code = """
import asyncio, json, sys
from shard.agent.providers.window import _ask, _http

async def serve(reader, writer):
    await reader.readuntil(b"\\r\\n\\r\\n")
    body = json.dumps({"data": [{"id": "m", "meta": {"n_ctx": 4096}}]}).encode()
    writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n%s" % (len(body), body))
    await writer.drain()
    writer.close()

async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    found = await _ask("openai", base, "m", _http(base, {}, 2.0))
    loaded = sorted(m for m in sys.modules if m.startswith(("urllib.req", "http.cl")))
    print(json.dumps([found.tokens, loaded]))

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == [4096, []]


@pytest.fixture(autouse=True)
def _learn_afresh() -> Any:
    window.forget()

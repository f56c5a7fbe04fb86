"""``chat_http``: an ``openai`` provider on a plain-http base URL sends Chat Completions itself,
without importing the SDK — the same request the SDK sends (compared at one server), read the same
way; anything the SDK alone handles (https, proxies, organization headers) still goes through it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from shard.agent.catalog import ModelEntry
from shard.agent.providers import chat_http, sse
from shard.agent.providers.base import Stop, TextDelta
from shard.agent.providers.openai import OpenAIProvider
from shard.agent.providers.sdk import sdk_for

from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, collect, entry_from_config, provider_toml, request


@pytest.fixture
def entry(tmp_path: Path, server: ProviderServer, monkeypatch: pytest.MonkeyPatch) -> ModelEntry:
    monkeypatch.setenv(KEY_ENV, KEY)
    body = provider_toml(
        "local", "openai", server.openai_url, '[{ id = "gpt-test", max_output_tokens = 64 }]'
    )
    return entry_from_config(tmp_path / "home", body, "local/gpt-test")


async def test_the_request_is_the_one_the_sdk_sends(server: ProviderServer, entry: ModelEntry):
    """One request through chat_http and the same through the SDK reach the server with the same
    path, the same headers (names and values, ``Content-Length`` included) and the same JSON body;
    both replies fold into the same events."""
    direct = OpenAIProvider(entry)
    assert direct._direct is not None
    through_sdk = OpenAIProvider(entry)
    through_sdk._direct = None
    server.replies.extend([Stream("openai/text.sse"), Stream("openai/text.sse")])
    ours, error = await collect(direct, request("gpt-test"))
    assert error is None
    theirs, error = await collect(through_sdk, request("gpt-test"))
    assert error is None
    assert ours == theirs
    assert "".join(e.text for e in ours if isinstance(e, TextDelta)) == "Hello, world!"
    assert isinstance(ours[-1], Stop)
    mine, sdk = server.requests
    assert mine.path == sdk.path == "/v1/chat/completions"
    headers = {k.lower(): v for k, v in mine.headers.items()}
    assert headers == {k.lower(): v for k, v in sdk.headers.items()}
    assert headers["authorization"] == f"Bearer {KEY}"
    assert mine.body == sdk.body


def test_only_a_plain_http_server_without_sdk_settings_goes_direct():
    """http (with or without a port or path) goes direct; https, no base URL, a URL with a user or
    a query, and any proxy or SDK header variable keep the SDK."""
    assert chat_http.goes_direct("http://127.0.0.1:11434/v1", {})
    assert chat_http.goes_direct("http://localhost/v1/", {})
    assert chat_http.goes_direct("HTTP://gpu-box:8000", {"NO_PROXY": "*"})
    assert not chat_http.goes_direct("https://api.openai.com/v1", {})
    assert not chat_http.goes_direct(None, {})
    assert not chat_http.goes_direct("http://user:pw@127.0.0.1:1/v1", {})
    assert not chat_http.goes_direct("http://127.0.0.1:1/v1?api-version=1", {})
    assert not chat_http.goes_direct("http://127.0.0.1:99999/v1", {})
    for variable in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        assert not chat_http.goes_direct("http://127.0.0.1:1/v1", {variable: "x"}), variable


def test_the_sdk_is_named_only_where_one_is_used(entry: ModelEntry, monkeypatch: pytest.MonkeyPatch):
    assert sdk_for(entry) is None
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    assert sdk_for(entry) == "openai"
    assert OpenAIProvider(entry)._direct is None


def test_lines_split_anywhere_read_as_the_sdk_reads_them():
    """SSE lines end at \\r\\n, \\n or \\r, and a \\r\\n split between two chunks is one line end."""
    lines = sse._Lines()
    got = lines.feed(b"data: a\r") + lines.feed(b"\ndata: b\rdata: c\n\nda") + lines.feed(b"ta: d\r")
    assert got == ["data: a", "data: b", "data: c", ""]
    assert lines.finish() == ["data: d"]


async def test_events_end_at_done_and_raise_an_error_event(server: ProviderServer, entry: ModelEntry):
    """Events after ``[DONE]`` are not read; an event whose JSON has an ``error`` is the SDK's
    ``APIError`` — the provider's words for it are those of a server error inside the stream."""
    chunk = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}'
    server.replies.append(Stream(f"data: {chunk}\n\ndata: [DONE]\n\ndata: {chunk}\n\n"))
    events, error = await collect(OpenAIProvider(entry), request("gpt-test"))
    assert error is None
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("Hi")]
    server.replies.append(Stream(f'data: {chunk}\n\ndata: {{"error": {{"message": "model melted"}}}}\n\n'))
    events, error = await collect(OpenAIProvider(entry), request("gpt-test"))
    assert error is not None
    assert error.message == "local: the server sent an error: model melted"


async def test_a_connection_is_used_again_for_the_next_request(server: ProviderServer, entry: ModelEntry):
    """Two requests of one provider: the second goes over the connection the first left open."""
    provider = OpenAIProvider(entry)
    http = provider._direct
    assert http is not None
    server.replies.extend([Stream("openai/text.sse"), Stream("openai/text.sse")])
    async for _ in provider.stream(request("gpt-test")):
        pass
    first = http._idle
    assert first is not None
    async for _ in provider.stream(request("gpt-test")):
        pass
    assert http._idle is first
    await http.aclose()
    assert len(server.requests) == 2


_PROBE = r"""
import asyncio, json, os, sys
from shard.agent.catalog import ModelEntry
from shard.agent.config.settings import ModelConfig, ProviderConfig
from shard.agent.providers.openai import OpenAIProvider
from shard.protocol.content import Message, TextBlock
from shard.agent.providers.base import ProviderRequest

os.environ["PROBE_KEY"] = "x"
entry = ModelEntry(ProviderConfig("o", "openai", sys.argv[1], "PROBE_KEY"), ModelConfig("g"))

async def main():
    provider = OpenAIProvider(entry)
    hi = Message(id="m", role="user", content=[TextBlock(text="hi")])
    req = ProviderRequest(model="g", system="", messages=[hi])
    kinds = [type(e).__name__ async for e in provider.stream(req)]
    await provider._direct.aclose()
    return kinds

kinds = asyncio.run(main())
heavy = ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "anyio")
print(json.dumps({"kinds": kinds, "heavy": sorted(m for m in sys.modules if m.split(".")[0] in heavy)}))
"""


async def test_a_whole_reply_from_a_local_server_imports_no_sdk(server: ProviderServer):
    """In a fresh interpreter, a reply streamed from a plain-http server is read without the SDK or
    its HTTP stack ever being imported."""
    server.replies.append(Stream("openai/text.sse"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _PROBE,
        server.openai_url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    result = json.loads(stdout)
    assert result["heavy"] == []
    assert "TextDelta" in result["kinds"]
    assert result["kinds"][-1] == "Stop"

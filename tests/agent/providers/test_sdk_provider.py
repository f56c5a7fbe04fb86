"""What ``SdkProvider`` does around the SDK: ``warm_up`` (one failing call made ahead by the
warm-runtime template leaves nothing for a provider's first real call to import — the SDK's
resources, its HTTP transport and our fold), and a client for a plain ``http://`` base URL builds no
SSL context (the CA bundle load is 40 to 60 ms of a local model's first request); an ``https://``
one still does."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from shard.agent.providers.sdk_provider import plain_http

from ._server import ProviderServer, Stream, fixture

_CALL = r"""
import asyncio, importlib, json, sys
from shard.agent.catalog import ModelEntry
from shard.agent.config.settings import ModelConfig, ProviderConfig
from shard.agent.providers.base import ProviderRequest
from shard.agent.providers.sdk_provider import warm_up
from shard.protocol.content import Message, TextBlock

CLASSES = {"openai": "OpenAIProvider", "anthropic": "AnthropicProvider"}
warm, calls = sys.argv[1] == "warm", [arg.split("=", 1) for arg in sys.argv[2:]]
# only the modules of the kinds this run calls: another's would load, ahead, what a call might need
classes = {kind: getattr(importlib.import_module(f"shard.agent.providers.{kind}"), CLASSES[kind])
           for kind, _ in calls}

async def first_call(kind, url):
    cls = classes[kind]
    if warm:
        await warm_up(cls, kind)
    before = set(sys.modules)
    entry = ModelEntry(ProviderConfig("p", kind, url, None), ModelConfig("m"))
    provider = cls.__new__(cls)
    provider.entry, provider.name, provider._key, provider._client = entry, "p", "k", None
    message = Message(id="msg-1", role="user", content=[TextBlock(text="hi")])
    request = ProviderRequest(model="m", system="", messages=[message])
    kinds = [type(event).__name__ async for event in provider.stream(request)]
    watched = (kind, "httpx", "httpcore", "anyio", "h11", "jiter", "shard")
    new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in watched)
    return {"new": new, "events": len(kinds)}

async def main():
    print(json.dumps({kind: await first_call(kind, url) for kind, url in calls}))

asyncio.run(main())
"""


async def _first_calls(server: ProviderServer, mode: str, *kinds: str) -> dict:
    """In one fresh interpreter, each kind's first call in turn (after its ``warm_up`` when ``mode``
    is ``warm``): for each, the number of events and the modules it loaded."""
    urls = []
    for kind in kinds:
        server.replies.append(Stream(fixture(f"{kind}/text.sse")))
        urls.append(f"{kind}={server.openai_url if kind == 'openai' else server.anthropic_url}")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CALL,
        mode,
        *urls,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return json.loads(out)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_after_warm_up_the_first_real_call_imports_nothing(kind):
    """With ``warm_up`` first, the real call streams its reply and loads no module of the SDK, its
    HTTP stack or Shard (the control, that the same call without it does load them, is the next
    test)."""
    server = await ProviderServer.start()
    try:
        warm = (await _first_calls(server, "warm", kind))[kind]
    finally:
        await server.close()
    assert warm["events"] > 0
    assert warm["new"] == []


@pytest.mark.slow
async def test_without_warm_up_the_first_call_loads_its_sdk():
    """The control for the test above: without ``warm_up``, each kind's first call does load its SDK
    (both kinds in one interpreter, one after the other: neither SDK imports the other)."""
    server = await ProviderServer.start()
    try:
        cold = await _first_calls(server, "cold", "openai", "anthropic")
    finally:
        await server.close()
    for kind in ("openai", "anthropic"):
        assert cold[kind]["events"] > 0
        assert any(m.startswith(f"{kind}.") for m in cold[kind]["new"]), cold


_PROBE = r"""
import asyncio, gc, json, os, ssl, sys
os.environ["PROBE_KEY"] = "x"
from shard.agent.catalog import ModelEntry
from shard.agent.config.settings import ModelConfig, ProviderConfig
from shard.agent.providers.base import ProviderRequest
from shard.agent.providers.openai import OpenAIProvider
from shard.protocol.content import Message, TextBlock

def contexts():
    gc.collect()  # count the live ones: what the clients hold
    return sum(isinstance(o, ssl.SSLContext) for o in gc.get_objects())

def entry(kind, url):
    return ModelEntry(ProviderConfig("p", kind, url, "PROBE_KEY"), ModelConfig("m"))

async def main(url):
    local = OpenAIProvider(entry("openai", url))
    local._direct = None  # through the SDK's client, as with a proxy set (else chat_http sends it)
    hi = Message(id="u", role="user", content=[TextBlock(text="hi")])
    ask = ProviderRequest(model="m", system="s", messages=[hi])
    events = [type(e).__name__ async for e in local.stream(ask)]
    after_reply = contexts()
    remote = OpenAIProvider(entry("openai", "https://127.0.0.1:9/v1"))
    await remote.client()  # builds the client only: nothing is sent
    print(json.dumps({"events": events, "plain": after_reply, "tls": contexts(),
                      "client_alive": local._client is not None}))

asyncio.run(main(sys.argv[1]))
"""


async def test_no_ssl_context_for_an_http_base_url(server: ProviderServer):
    """In a fresh interpreter: a reply streamed from the local http:// server leaves no SSLContext
    alive while the provider's client is; building a client for an https:// URL then creates one
    (the control: the count does see them). Both kinds build their client in ``SdkProvider``."""
    server.replies.append(Stream("openai/text.sse"))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _PROBE, server.openai_url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    result = json.loads(out)
    assert "TextDelta" in result["events"]
    assert result["client_alive"] is True
    assert result["plain"] == 0
    assert result["tls"] >= 1


@pytest.mark.parametrize(
    ("url", "plain"),
    [
        ("http://127.0.0.1:11434/v1", True),
        ("HTTP://localhost:8080", True),
        ("https://api.openai.com/v1", False),
        ("https://127.0.0.1:9", False),
        (None, False),
        ("", False),
    ],
)
def test_plain_http(url, plain):
    assert plain_http(url) is plain


_SHARED = r"""
import asyncio, json, os, ssl, sys
os.environ["PROBE_KEY"] = "x"
from shard.agent.catalog import ModelEntry
from shard.agent.config.settings import ModelConfig, ProviderConfig
from shard.agent.providers.anthropic import AnthropicProvider
from shard.agent.providers.openai import OpenAIProvider
from shard.agent.providers.sdk_provider import warm_up

made = []
new = ssl.SSLContext.__new__
def counted(cls, *args, **kwargs):  # every TLS context made from here on (each loads the CA bundle)
    made.append(cls)
    return new(cls, *args, **kwargs)

def entry(kind, url):
    return ModelEntry(ProviderConfig("p", kind, url, "PROBE_KEY"), ModelConfig("m"))

async def main(warm):
    if warm:
        await warm_up(OpenAIProvider, "openai")
        await warm_up(AnthropicProvider, "anthropic")
    ssl.SSLContext.__new__ = counted
    clients = [
        await OpenAIProvider(entry("openai", "https://127.0.0.1:9/v1")).client(),
        await OpenAIProvider(entry("openai", "https://127.0.0.1:8/v1")).client(),
        await AnthropicProvider(entry("anthropic", "https://127.0.0.1:9")).client(),
    ]
    print(json.dumps({"made": len(made), "clients": len(clients)}))

asyncio.run(main(sys.argv[1] == "warm"))
"""


async def _contexts_made(mode: str) -> dict:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _SHARED, mode, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return json.loads(out)


@pytest.mark.slow
async def test_https_clients_share_the_context_the_warm_up_made():
    """After ``warm_up`` (what the template runs before it forks), three https clients of both SDKs
    make no TLS context: a forked runtime's first call loads no CA bundle. Without the warm-up (the
    control) they make one — one, not one each: they share it."""
    warm = await _contexts_made("warm")
    cold = await _contexts_made("cold")
    assert warm == {"made": 0, "clients": 3}
    assert cold == {"made": 1, "clients": 3}

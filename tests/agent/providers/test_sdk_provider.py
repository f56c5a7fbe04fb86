"""``warm_up``: one failing call made ahead (by the warm-runtime template) leaves nothing for a
provider's first real call to import — the SDK's resources, its HTTP transport and our fold."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from ._server import ProviderServer, Stream, fixture

_CALL = r"""
import asyncio, json, sys
from shard.agent.catalog import ModelEntry
from shard.agent.config import ModelConfig, ProviderConfig
from shard.agent.providers.{module} import {cls}
from shard.agent.providers.base import ProviderRequest
from shard.agent.providers.sdk_provider import warm_up
from shard.protocol.content import Message, TextBlock

async def main(warm):
    if warm:
        await warm_up({cls}, "{kind}")
    before = set(sys.modules)
    entry = ModelEntry(ProviderConfig("p", "{kind}", sys.argv[1], None), ModelConfig("m"))
    provider = {cls}.__new__({cls})
    provider.entry, provider.name, provider._key, provider._client = entry, "p", "k", None
    message = Message(id="msg-1", role="user", content=[TextBlock(text="hi")])
    request = ProviderRequest(model="m", system="", messages=[message])
    kinds = [type(event).__name__ async for event in provider.stream(request)]
    watched = ("{kind}", "httpx", "httpcore", "anyio", "h11", "jiter", "shard")
    new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in watched)
    print(json.dumps({{"new": new, "events": len(kinds)}}))

asyncio.run(main(sys.argv[2] == "warm"))
"""


async def _first_call(server: ProviderServer, kind: str, warm: bool) -> dict:
    cls = {"openai": "OpenAIProvider", "anthropic": "AnthropicProvider"}[kind]
    server.replies.append(Stream(fixture(f"{kind}/text.sse")))
    url = server.openai_url if kind == "openai" else server.anthropic_url
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CALL.format(module=kind, cls=cls, kind=kind),
        url,
        "warm" if warm else "cold",
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
    HTTP stack or Shard; without it (the control) the same call does load them."""
    server = await ProviderServer.start()
    try:
        warm = await _first_call(server, kind, warm=True)
        cold = await _first_call(server, kind, warm=False)
    finally:
        await server.close()
    assert warm["events"] > 0
    assert warm["new"] == []
    assert any(m.startswith(f"{kind}.") for m in cold["new"]), cold

"""The provider SDKs are imported lazily: building a provider imports nothing heavy, and a runtime
whose model needs an SDK starts loading it in the background right after ``sync`` — without a
prompt, and not before ``hello``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from shard.testing import AgentProcess

from ._server import ProviderServer
from ._support import KEY, KEY_ENV, provider_toml, write_home

_PROBE = r"""
import asyncio, json, os, sys
from pathlib import Path

os.environ["PROBE_KEY"] = "x"
from shard.agent.catalog import ModelEntry
from shard.agent.config import Config, ModelConfig, ProviderConfig
from shard.agent.providers.anthropic import AnthropicProvider
from shard.agent.providers.openai import OpenAIProvider
from shard.agent.providers.registry import build_provider
import shard.agent.runtime, shard.agent.turn, shard.agent.stdio

anth = ModelEntry(ProviderConfig("a", "anthropic", "http://127.0.0.1:9", "PROBE_KEY"), ModelConfig("c"))
oai = ModelEntry(ProviderConfig("o", "openai", "http://127.0.0.1:9/v1", "PROBE_KEY"), ModelConfig("g"))
AnthropicProvider(anth)
OpenAIProvider(oai)
build_provider(anth, Config(home=Path(".")))
build_provider(oai, Config(home=Path(".")))
heavy = ("anthropic", "openai", "httpx", "httpx2", "httpcore", "httpcore2", "jiter")
before = sorted(m for m in sys.modules if m.split(".")[0] in heavy)

from shard.agent.providers import sdk
asyncio.run(sdk.load("openai"))  # the control: the same check does see an SDK once it is loaded
print(json.dumps({"before": before, "after": "openai" in sys.modules}))
"""


async def test_building_providers_imports_no_sdk():
    """In a fresh interpreter: importing the provider modules, the runtime and the turn loop, and
    constructing an AnthropicProvider and an OpenAIProvider (directly and through the registry)
    leaves anthropic, openai, their HTTP stack and jiter out of sys.modules; loading through
    ``sdk.load`` then does import the SDK."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _PROBE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    result = json.loads(stdout)
    assert result == {"before": [], "after": True}


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


async def test_runtime_preloads_the_sdk_after_sync_without_a_prompt(tmp_path, server: ProviderServer):
    """``shard agent --stdio`` whose default model is anthropic: when hello arrives the anthropic
    SDK's native dependency (jiter) is not mapped yet; after sync, with no prompt sent, it gets
    loaded in the background (polled in /proc/<pid>/maps until it appears, with a timeout). The
    server is never contacted."""
    home = write_home(
        tmp_path / "home",
        provider_toml("anth", "anthropic", server.anthropic_url, '[{ id = "claude-test" }]'),
        default_model="anth/claude-test",
    )
    project = tmp_path / "project"
    project.mkdir()
    agent = await AgentProcess.start(home, project, env={KEY_ENV: KEY})
    try:
        hello = await agent.next()
        assert hello["type"] == "hello"
        assert "jiter" not in _maps(agent.proc.pid)  # phase A: nothing but the stdlib and shard
        sync = await agent.next()
        assert sync["type"] == "sync"
        # The mapping is state of another process, with no event to await: poll it, bounded.
        async with asyncio.timeout(30):
            while "jiter" not in _maps(agent.proc.pid):  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        assert agent.proc.returncode is None
        assert server.requests == []
    finally:
        await agent.kill()

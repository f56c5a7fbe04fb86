"""The provider SDKs are imported lazily: building a provider imports nothing heavy, and a runtime
whose model needs an SDK starts loading it in the background right after ``sync`` — without a
prompt, and not before ``hello``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from shard.testing import AgentProcess

from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home

_PROBE = r"""
import asyncio, json, os, sys
from pathlib import Path

os.environ["PROBE_KEY"] = "x"
from shard.agent.catalog import ModelEntry
from shard.agent.config.settings import Config, ModelConfig, ProviderConfig
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
    # cold: the subject is what a started interpreter has mapped, not what a template preloaded
    agent = await AgentProcess.start(home, project, env={KEY_ENV: KEY}, cold=True)
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


# Put first on sys.path of the agent under test: its import of ``anthropic`` waits for a file to
# appear (saying on stderr when it starts), so the SDK import is still running for as long as the
# test wants.
_SLOW_SDK = r"""
import importlib.machinery, os, sys, time

class _SlowSdk:
    # Slow where a real import is: in running the package's code (a finder runs under the global
    # import lock, a module's code only under its own).
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            print("probe: anthropic import started", file=sys.stderr, flush=True)
            while not os.path.exists(os.environ["PROBE_RELEASE"]):
                time.sleep(0.01)  # the agent's import thread, held: the test waits for no clock
            run(module)

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _SlowSdk())
"""


async def test_the_first_command_after_sync_is_answered_while_the_sdk_import_runs(
    tmp_path, server: ProviderServer
):
    """``shard agent --stdio`` whose model is anthropic, with that SDK's import held open: after
    sync, once the import has started, ``list_modes`` and ``list_models`` are answered while it is
    still running; released, the import completes and a prompt is answered through the SDK."""
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sitecustomize.py").write_text(_SLOW_SDK)
    release = tmp_path / "release"
    home = write_home(
        tmp_path / "home",
        provider_toml("anth", "anthropic", server.anthropic_url, '[{ id = "claude-test" }]'),
        default_model="anth/claude-test",
    )
    project = tmp_path / "project"
    project.mkdir()
    env = {KEY_ENV: KEY, "PYTHONPATH": str(probe), "PROBE_RELEASE": str(release)}
    agent = await AgentProcess.start(home, project, env=env)
    try:
        await agent.handshake()
        assert agent.proc.stderr is not None
        async with asyncio.timeout(30):  # notices (the home's mode) may come first
            while (line := await agent.proc.stderr.readline()) != b"probe: anthropic import started\n":
                assert line, "the agent ended before importing the SDK"
        await agent.send({"type": "list_modes", "id": "m"})
        await agent.send({"type": "list_models", "id": "l"})
        answers = await agent.until(lambda m: m.get("id") == "l")
        assert [m["id"] for m in answers if m["type"] == "response" and m["success"]] == ["m", "l"]
        assert not release.exists()  # the import is still held
        release.touch()
        server.replies.append(Stream("anthropic/text.sse"))
        await agent.send({"type": "prompt", "message": "hi"})
        events = await agent.until(lambda m: m["type"] == "turn_end")
        text = "".join(m.get("text_delta", "") for m in events if m["type"] == "message_delta")
        assert text == "Hello, world!"
    finally:
        await agent.kill()

"""A runtime's SDK never loads aiohttp, although it is installed (the tests use it): the SDKs'
optional aiohttp transport is kept out (``providers/backends.py``). Checked on the real processes,
without patching them: aiohttp's C extensions would be mapped in ``/proc/<pid>/maps`` once imported
(a plain ``import openai`` maps them: the control). The reply having streamed through the local
server shows the SDK was loaded and used."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from shard.testing import AgentProcess
from shard.testing.agent_process import shard_command

from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home


def _aiohttp_mapped(pid: int) -> bool:
    return "/aiohttp/" in Path(f"/proc/{pid}/maps").read_text()


def _home(tmp_path: Path, server: ProviderServer) -> Path:
    return write_home(
        tmp_path / "home",
        # anthropic: its SDK is always used (an openai server on http:// is spoken to without one)
        provider_toml("anth", "anthropic", server.anthropic_url, '[{ id = "claude-test" }]'),
        default_model="anth/claude-test",
    )


async def test_a_stdio_runtime_streams_a_reply_without_loading_aiohttp(tmp_path, server: ProviderServer):
    server.replies.append(Stream("anthropic/text.sse"))
    project = tmp_path / "project"
    project.mkdir()
    agent = await AgentProcess.start(_home(tmp_path, server), project, env={KEY_ENV: KEY})
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "hi"})
        events = await agent.until(lambda m: m["type"] == "turn_end")
        assert any(m["type"] == "message_delta" for m in events)
        assert len(server.requests) == 1
        assert not _aiohttp_mapped(agent.proc.pid)
    finally:
        await agent.kill()


async def test_shard_run_streams_a_reply_without_loading_aiohttp(tmp_path, server: ProviderServer):
    """``shard run`` starts its SDK import early, on its own thread: looked at while the reply is
    held mid-stream (the SDK is streaming it), the process has no aiohttp."""
    held = Stream("anthropic/text.sse", hold_after=4)  # after its first text delta
    server.replies.append(held)
    project = tmp_path / "project"
    project.mkdir()
    proc = await asyncio.create_subprocess_exec(
        *shard_command("run", "--json", "hi"),
        cwd=project,
        env={**os.environ, "SHARD_HOME": str(_home(tmp_path, server)), KEY_ENV: KEY},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            while b'"type":"message_delta"' not in (line := await proc.stdout.readline()):
                assert line, "shard run ended before streaming"
        assert not _aiohttp_mapped(proc.pid)
        held.release.set()
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_the_check_sees_aiohttp_when_an_sdk_loads_it():
    """The control for the observable: a plain ``import openai`` (no Shard) does map aiohttp."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import openai, sys; print('ready', flush=True); sys.stdin.read()",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    try:
        assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"ready\n"
        assert _aiohttp_mapped(proc.pid)
    finally:
        proc.stdin.close()
        await proc.wait()

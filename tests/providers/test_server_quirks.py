"""What real OpenAI-compatible servers do, through the real turn loop (a ``shard agent --stdio``
process against the local test server): a whole JSON completion answering a streaming request and a
reply with nothing in it. Ends with ``shard run`` end to end."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from shard.testing import AgentProcess, types

from ._server import Json, ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, session_entries, write_home

Spawn = Callable[..., Awaitable[AgentProcess]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Demo\nThe launch code is 7-4-1.\n")
    return root


def _home(tmp_path: Path, server: ProviderServer, kind: str) -> Path:
    if kind == "openai":
        body = provider_toml("local", "openai", server.openai_url, '["m"]')
        return write_home(tmp_path / "home", body, default_model="local/m")
    body = provider_toml("anth", "anthropic", server.anthropic_url, '["claude-test"]')
    return write_home(tmp_path / "home", body, default_model="anth/claude-test")


@pytest.fixture
async def spawn(tmp_path: Path, project: Path, server: ProviderServer) -> AsyncIterator[Spawn]:
    """``await spawn(kind="openai")``: config.toml for the test server, the agent started."""
    procs: list[AgentProcess] = []

    async def _spawn(kind: str = "openai") -> AgentProcess:
        proc = await AgentProcess.start(_home(tmp_path, server, kind), project, env={KEY_ENV: KEY})
        procs.append(proc)
        await proc.handshake()
        return proc

    yield _spawn
    for proc in procs:
        await proc.kill()


def _of(read: list[dict], kind: str) -> list[dict]:
    return [m for m in read if m["type"] == kind]


def _assistant(read: list[dict]) -> list[dict]:
    return [m["message"] for m in _of(read, "message_complete") if m["message"]["role"] == "assistant"]


async def test_a_json_completion_is_taken_as_the_reply(spawn, server):
    """llama-server answers the streaming request with ``200 application/json``: the tool call in
    it runs and the next JSON completion is the answer — two requests in all (no retry), no error,
    usage reported for both calls.

    Covers: R9.4.18
    """
    server.replies.extend([Json("openai/llama_server_tool_call.json"), Json("openai/llama_server_text.json")])
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "What does the README say?"})
    read = await agent.idle()
    assert "error" not in types(read)
    assert not [m for m in _of(read, "status") if "detail" in m], "nothing was retried"
    first, answer = _assistant(read)
    assert first["content"][0]["type"] == "tool_call"
    assert [r for r in _of(read, "tool_result") if not r["is_error"]]
    assert answer["content"] == [
        {"type": "thinking", "text": "The README names the code."},
        {"type": "text", "text": "The launch code is 7-4-1."},
    ]
    assert [u["output"] for u in _of(read, "usage")] == [21, 14]
    assert len(server.requests) == 2


async def test_a_reply_with_nothing_in_it_fails_the_turn_and_records_nothing(spawn, server, tmp_path):
    """Every attempt answers with a role and finish_reason but no content and no usage: after the
    configured attempts, one non-fatal PROVIDER_ERROR naming the cause, no assistant message (in
    events or in the session), the turn ends, and the next prompt works.

    Covers: R8.17, R9.4.23, R9.4.25
    """
    server.replies.extend([Stream("openai/empty_reply.sse") for _ in range(3)])
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "hello"})
    read = await agent.idle()
    [error] = _of(read, "error")
    assert (error["code"], error["fatal"]) == ("PROVIDER_ERROR", False)
    assert "the server's reply had no content and no usage" in error["message"]
    assert "finish_reason 'stop'" in error["message"]
    assert "gave up after 3 attempts" in error["message"]
    assert _assistant(read) == []
    assert "turn_end" in types(read)
    assert len(server.requests) == 3
    assert not [
        e for e in session_entries(tmp_path / "home") if e.get("message", {}).get("role") == "assistant"
    ]

    server.replies.append(Stream("openai/text.sse"))
    await agent.send({"type": "prompt", "message": "again"})
    read2 = await agent.idle()
    assert "error" not in types(read2)
    assert _assistant(read2)[0]["content"] == [{"type": "text", "text": "Hello, world!"}]


async def _shard_run(home: Path, project: Path, prompt: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_KEY")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shard",
        "run",
        prompt,
        cwd=project,
        env={**env, "SHARD_HOME": str(home), KEY_ENV: KEY},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, stdout.decode(), stderr.decode()


async def test_shard_run_takes_json_completions(tmp_path, project, server):
    """``shard run`` against a server answering with whole JSON completions (a tool call, then the
    answer): exit 0 and stdout is the answer."""
    server.replies.extend([Json("openai/llama_server_tool_call.json"), Json("openai/llama_server_text.json")])
    code, out, err = await _shard_run(_home(tmp_path, server, "openai"), project, "What does the README say?")
    assert code == 0, err
    assert out == "The launch code is 7-4-1.\n"
    assert len(server.requests) == 2

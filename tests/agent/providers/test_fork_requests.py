"""A fork at an assistant message that called tools, continued: the request the fork sends holds
every call with its result, for real, through ``shard agent --stdio`` and a local server playing
the OpenAI or the Anthropic API (``_server.py``).

Before issue 26 the fork kept the calls and dropped their results, so the fork's first request
carried ``tool_calls`` followed by a user message: a 400 from either API. Now the fork takes the
results along (``session/fork.py``), and the adapters would repair a dangling call anyway
(``providers/pairing.py``); the fork's request carries the tools' real output.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import orjson
import pytest

from shard.testing import AgentProcess, Runtimes

from ._pairs import assert_anthropic_pairs, assert_openai_pairs, tool_result_texts, tool_texts
from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home

Spawn = Callable[..., Awaitable[AgentProcess]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_text("the contents of a\n")
    (root / "src" / "main.py").write_text("print('hi')\n")
    return root


@pytest.fixture
async def spawn(tmp_path: Path, project: Path, server: ProviderServer) -> AsyncIterator[Spawn]:
    """``await spawn(kind, *args)``: config.toml for the test server, a started agent (handshaken)."""
    runtimes = Runtimes()

    async def _spawn(kind: str, *args: str) -> AgentProcess:
        home = tmp_path / "home"
        if kind == "openai":
            body = provider_toml("local", "openai", server.openai_url, '["m"]')
            write_home(home, body, default_model="local/m")
        else:
            body = provider_toml("anth", "anthropic", server.anthropic_url, '["claude-test"]')
            write_home(home, body, default_model="anth/claude-test")
        return await runtimes.start(home, project, *args, env={KEY_ENV: KEY})

    yield _spawn
    await runtimes.close()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_fork_at_a_reply_with_tool_calls_sends_each_call_with_its_result(
    spawn, server, tmp_path, kind
):
    """The model reads a.txt and lists src/ in parallel, then answers. Fork at the message that made
    the two calls, open the fork, prompt: the request the fork sends answers both calls before the
    new prompt (every ``tool_calls`` id by its ``tool`` message / every ``tool_use`` by a
    ``tool_result`` opening the next user turn), with the tools' real output, and the fork's file
    holds both results.

    Covers: R9.2.60, R9.2.61, R9.2.63
    """
    server.replies.extend([Stream(f"{kind}/parallel_tools.sse"), Stream(f"{kind}/text.sse")])
    agent = await spawn(kind)
    await agent.send({"type": "prompt", "message": "look around"})
    read = await agent.idle()
    completed = [m["message"] for m in read if m["type"] == "message_complete"]
    replies = [m for m in completed if m["role"] == "assistant"]
    calls = [b["id"] for b in replies[0]["content"] if b["type"] == "tool_call"]
    assert len(calls) == 2
    resp, _ = await agent.request(
        {"type": "session_op", "id": "f", "op": "fork", "args": {"from_entry_id": replies[0]["id"]}}
    )
    assert resp["success"], resp
    fork_id = resp["data"]["session_id"]
    forked_file = next((tmp_path / "home" / "sessions").glob(f"*/forks/{fork_id}/session.jsonl"))
    rows = [orjson.loads(line) for line in forked_file.read_bytes().splitlines()]
    assert sorted(r["tool_call_id"] for r in rows if r["kind"] == "tool_result") == sorted(calls)
    assert resp["data"]["head_entry_id"] == rows[-1]["id"]
    await agent.finish()

    fork = await spawn(kind, "--session", fork_id)
    server.replies.append(Stream(f"{kind}/text.sse"))
    await fork.send({"type": "prompt", "message": "and now?"})
    await fork.idle()
    body = server.requests[-1].body
    if kind == "openai":
        assert_openai_pairs(body["messages"])
        results = tool_texts(body["messages"])
        assert body["messages"][-1] == {"role": "user", "content": "and now?"}
    else:
        assert_anthropic_pairs(body["messages"])
        results = tool_result_texts(body["messages"])
    assert len(results) == 2
    assert any("the contents of a" in text for text in results.values()), results
    assert not any("did not run" in text for text in results.values()), "the real results, not a repair"

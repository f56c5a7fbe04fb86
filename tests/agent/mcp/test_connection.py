"""One server's connection, against the real demo server (a process: the SDK's over stdio and
streamable HTTP, its plain double for the rest): a server that hangs, one that dies mid-call, one that
never starts.

shard.agent.mcp.connection is imported by each test, not at the top: it imports the MCP SDK (~0.6
CPU-s), which every xdist worker collecting the suite would pay for."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from agent.mcp._servers import alive, demo, gone, pids
from shard.agent.mcp.config import McpServerConfig
from shard.agent.mcp.tool import output


def _text(result) -> str:
    return output(result).content.to_wire().get("text") or output(result).content.to_wire()["message"]


async def test_stdio_server_lists_its_tools_and_answers_calls(tmp_path):
    """Against the SDK's own server (the other tests run its plain double, test_demo_parity.py)."""
    from shard.agent.mcp.connection import Connection

    connection = Connection(demo("demo", "--sdk"), tmp_path, os.environ)
    try:
        tools = {t.name: t for t in await connection.start()}
        assert {"shout", "add", "hang", "crash"} <= set(tools)
        assert tools["add"].read_only is True
        assert tools["shout"].read_only is False
        assert tools["shout"].input_schema["properties"] == {"text": {"title": "Text", "type": "string"}}
        assert _text(await connection.call("shout", {"text": "hi"})) == "HI!"
        refused = await connection.call("refuse", {"reason": "no"})
        assert refused.is_error is True
    finally:
        await connection.close()


@pytest.mark.slow  # the hung server is stopped by SIGTERM, 2 s after its stdin closes
async def test_a_hanging_call_times_out_and_the_server_stays_up(tmp_path):
    from shard.agent.mcp.connection import Connection, McpFailure

    connection = Connection(demo(call_timeout=0.5), tmp_path, os.environ)
    try:
        await connection.start()
        with pytest.raises(McpFailure, match=r"did not answer 'hang' within 0.5 s \(call_timeout\)"):
            await connection.call("hang", {})
        assert connection.alive
        assert _text(await connection.call("add", {"a": 2, "b": 3})) == "5"
    finally:
        await connection.close()


async def test_a_server_that_dies_mid_call_is_one_failure_and_can_be_started_again(tmp_path):
    from shard.agent.mcp.connection import Connection, McpFailure

    written = tmp_path / "pids"
    connection = Connection(demo(env=(("DEMO_PIDS", str(written)),)), tmp_path, os.environ)
    try:
        await connection.start()
        with pytest.raises(McpFailure, match=r"^died during the call$"):
            await connection.call("crash", {})
        assert not connection.alive
        with pytest.raises(McpFailure, match="is not running"):
            await connection.call("shout", {"text": "x"})
        await connection.start()
        assert _text(await connection.call("shout", {"text": "back"})) == "BACK!"
        assert len(pids(written)) == 2
    finally:
        await connection.close()
    assert not any(alive(pid) for pid in pids(written))


async def test_cancelling_a_call_returns_at_once(tmp_path):
    """An abort cancels the turn's task while it waits on the server: the wait ends, the server
    stays usable."""
    from shard.agent.mcp.connection import Connection

    connection = Connection(demo(), tmp_path, os.environ)
    try:
        await connection.start()
        call = asyncio.ensure_future(connection.call("hang", {}))
        await asyncio.sleep(0)  # let the request go out
        call.cancel()
        done, _ = await asyncio.wait({call}, timeout=5)
        assert done, "the cancelled call did not end"
        assert call.cancelled()
        assert _text(await connection.call("add", {"a": 1, "b": 1})) == "2"
    finally:
        await connection.close()


@pytest.mark.slow
async def test_a_server_that_never_answers_the_handshake_fails_to_start_and_is_stopped(tmp_path):
    from shard.agent.mcp.connection import Connection, McpFailure

    written = tmp_path / "pids"
    config = demo("demo", "--hang-at-start", start_timeout=0.5, env=(("DEMO_PIDS", str(written)),))
    connection = Connection(config, tmp_path, os.environ)
    with pytest.raises(McpFailure, match=r"^did not start within 0.5 s \(start_timeout\)$"):
        await connection.start()
    await connection.close()
    assert len(pids(written)) == 1
    assert not alive(pids(written)[0]), "close() leaves no server behind"


@pytest.mark.slow
async def test_a_server_that_does_not_start_is_killed_at_once_with_its_process_group(tmp_path):
    """A start that timed out kills the server and what it started (its process group) before
    ``start`` returns — not seconds later from the SDK's gentle stop (stdin closed, 2 s, SIGTERM),
    which a runtime killed meanwhile never finishes: the server, leading its own session, was left
    running as an orphan."""
    from shard.agent.mcp.connection import Connection, McpFailure

    written = tmp_path / "pids"
    config = demo(
        "demo", "--with-child", "--hang-at-start", start_timeout=2.0, env=(("DEMO_PIDS", str(written)),)
    )
    connection = Connection(config, tmp_path, os.environ)
    try:
        with pytest.raises(McpFailure, match=r"^did not start within 2 s"):
            await connection.start()
        started = pids(written)
        assert len(started) == 2, "the server and its child"
        assert await gone(started, within=1.0), "killed with its group, at once"
    finally:
        await connection.close()


async def test_a_program_that_is_not_there_or_exits_at_once_is_one_line(tmp_path):
    from shard.agent.mcp.connection import Connection, McpFailure

    missing = Connection(McpServerConfig(name="x", command="no-such-program-here"), tmp_path, os.environ)
    with pytest.raises(McpFailure, match=r"^could not start: no such program: no-such-program-here$"):
        await missing.start()
    await missing.close()
    dies = Connection(
        McpServerConfig(name="x", command="sh", args=("-c", "echo boom >&2; exit 1")), tmp_path, os.environ
    )
    with pytest.raises(
        McpFailure, match=r"^could not start: it closed the connection \(its last stderr line: boom\)$"
    ):
        await dies.start()
    await dies.close()


async def test_the_server_gets_no_secret_from_the_agents_environment(tmp_path, monkeypatch):
    from shard.agent.mcp.connection import Connection

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("SHARD_TEST_SECRET", "s3cret")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-token")
    config = demo(env=(("MODE", "test"),), pass_env=("GITHUB_TOKEN",))
    connection = Connection(config, tmp_path, os.environ)
    try:
        await connection.start()
        names = json.loads(_text(await connection.call("env_names", {})))
    finally:
        await connection.close()
    assert "MODE" in names
    assert "GITHUB_TOKEN" in names
    assert "PATH" in names
    assert "OPENAI_API_KEY" not in names
    assert "SHARD_TEST_SECRET" not in names


async def test_http_server_with_a_header_from_the_environment(tmp_path, http_url):
    from shard.agent.mcp.connection import Connection, McpFailure

    config = McpServerConfig(name="web", url=http_url, headers_env=(("X-Api-Key", "DEMO_KEY"),))
    connection = Connection(config, tmp_path, {"DEMO_KEY": "k-123"})
    try:
        tools = {t.name for t in await connection.start()}
        assert "shout" in tools
        assert _text(await connection.call("header", {"name": "X-Api-Key"})) == "k-123"
        assert _text(await connection.call("shout", {"text": "web"})) == "WEB!"
    finally:
        await connection.close()
    unset = Connection(config, tmp_path, {})
    with pytest.raises(
        McpFailure, match=r"^could not start: header X-Api-Key comes from \$DEMO_KEY, which is not set$"
    ):
        await unset.start()
    await unset.close()

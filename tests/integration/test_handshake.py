"""hello and sync on a direct connection (PROTOCOL §3, §7, §9.1)."""

from __future__ import annotations

import asyncio

from shard.agent.catalog import BASE_CAPABILITIES, REASONING_CAPABILITIES
from shard.protocol.codec import parse_event
from shard.protocol.events import Hello, Sync
from shard.testing import text_step


async def test_hello_comes_first_without_any_client_message(start):
    """hello is sent on connect, before the client says anything, then sync follows at once.

    Covers: R3.2, R9.1.2, R6.1.2, R4.2.1
    """
    agent = await start([text_step("hi")])
    first = await agent.next(timeout=20)
    assert first["type"] == "hello"
    second = await agent.next()
    assert second["type"] == "sync"
    # nothing was written to stdin; the stdin pipe is still open
    assert not agent.proc.stdin.is_closing()


async def test_hello_shape_and_version(start):
    """hello carries protocol_version "0.1.0", a server version and the capability list.

    Covers: R9.1.1, R7.1, R7.2, R7.3, R7.4, R7.5, R7.6, R7.7, R5.2.6
    """
    agent = await start([text_step("hi")])
    hello, _ = await agent.handshake()
    parsed = parse_event(hello)
    assert isinstance(parsed, Hello)
    assert set(hello) == {"type", "protocol_version", "server_version", "capabilities"}
    assert hello["protocol_version"] == "0.1.0"
    major, minor, patch = hello["protocol_version"].split(".")
    assert (major, minor, patch) == ("0", "1", "0")
    assert isinstance(hello["server_version"], str)
    assert hello["server_version"]
    assert hello["capabilities"] == list(BASE_CAPABILITIES)
    assert "agent_id" not in hello


async def test_sync_mirrors_hello_and_carries_state(start):
    """sync: status, authoritative mode, capabilities equal to hello's, an empty live window and no
    pending requests on a fresh session; no agent_id and no runtime_epoch on a direct connection.

    Covers: R9.1.4, R9.1.5, R9.1.7, R9.1.8, R9.1.9, R9.1.12, R9.1.18, R5.2.6
    """
    agent = await start([text_step("hi")], "--mode", "plan")
    hello, sync = await agent.handshake()
    assert isinstance(parse_event(sync), Sync)
    assert sync["status"] == "idle"
    assert sync["mode"] == "plan"
    assert sync["capabilities"] == hello["capabilities"]
    assert sync["live_window"] == {"messages": []}
    assert sync["pending_requests"] == []
    assert "agent_id" not in sync
    assert "runtime_epoch" not in sync
    resp, _ = await agent.request({"type": "list_modes", "id": "m"})
    assert resp["data"]["active"] == sync["mode"]


async def test_reasoning_capabilities_only_for_models_with_levels(start, home, project):
    """A model with reasoning levels adds reasoning-catalog/-switch to hello and sync; one without
    does not.

    Covers: R9.2.31, R7.2
    """
    models = [
        {"id": "m", "context_window": 1000},
        {"id": "thinker", "reasoning_levels": ["low", "high"], "default_reasoning": "low"},
    ]
    agent = await start([text_step("hi")], models=models)
    hello, _sync = await agent.handshake()
    assert "reasoning-catalog" not in hello["capabilities"]
    await agent.kill()
    agent2 = await start(None, "--model", "test/thinker")
    hello2, sync2 = await agent2.handshake()
    assert hello2["capabilities"] == [*BASE_CAPABILITIES, *REASONING_CAPABILITIES]
    assert sync2["capabilities"] == hello2["capabilities"]


async def test_events_are_lf_terminated_single_lines(start):
    """Every message arrives as exactly one JSON object on one LF-terminated line.

    Covers: R2.1.1, R2.3.1, R5.0.2
    """
    agent = await start([text_step("line one\nline two\u2028still two")])
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go\nnow"})
    await agent.idle()
    assert agent.proc.stdin is not None
    # AgentProcess.next asserts each line ends with LF and parses it as one JSON object
    assert all(isinstance(m, dict) and isinstance(m["type"], str) for m in agent.seen)
    deltas = "".join(m.get("text_delta", "") for m in agent.seen if m["type"] == "message_delta")
    assert deltas == "line one\nline two\u2028still two"


async def test_exits_cleanly_when_input_ends(start):
    """Closing stdin with nothing running ends the process with status 0."""
    agent = await start([text_step("hi")])
    await agent.handshake()
    code = await agent.finish()
    assert code == 0
    assert await asyncio.wait_for(agent.stderr_text(), 5) == ""

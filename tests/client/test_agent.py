"""Client-side rules that only a scripted peer can provoke (the real daemon always advertises
capabilities, knows every render kind, and supersedes runtimes only on a crash): a fake server on
a local unix socket speaks the protocol line by line and records what the client sent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from shard.client import CapabilityMissing, ConnectionLost, ShardClient, StaleRuntime, prompt_command
from shard.protocol.events import ModelChanged, ToolResult
from shard.testing.fake_daemon import AGENT, INFO, FakeDaemon, sync


class Peer(FakeDaemon):
    """The fake daemon; each test sets ``answer``."""


def attach_ok(command: dict[str, Any], **sync_extra: Any) -> list[dict[str, Any]]:
    response = {"type": "response", "id": command["id"], "command": command["type"], "success": True}
    return [{**response, "data": {"status": "idle", "info": INFO}}, sync(**sync_extra)]


async def test_no_capabilities_in_sync_means_no_model_or_mode_controls(tmp_path: Path):
    """A sync without capabilities: model and mode calls are refused before anything is sent, never
    inferred from the protocol version; a model_changed without capabilities is accepted and leaves
    them as they were.

    Covers: R9.1.10, R7.8, R7.10, R10.2.4
    """
    async with Peer(tmp_path / "fake.sock") as peer:
        peer.answer = lambda c: attach_ok(c) if c["type"] == "agent.attach" else []
        async with await ShardClient.connect_unix(peer.path) as client:
            agent = await client.attach(AGENT)
            assert agent.capabilities is None
            for call in (
                agent.set_model("x/y"),
                agent.list_models(),
                agent.set_mode("plan"),
                agent.list_modes(),
            ):
                with pytest.raises(CapabilityMissing):
                    await call
            assert [c["type"] for c in peer.received] == ["agent.attach"]
            stream = agent.subscribe()
            model = {"id": "x/y", "provider": "x", "model": "y"}
            await peer.send({"type": "model_changed", "agent_id": AGENT, "previous": model, "active": model})
            changed = await stream.next(10)
            assert isinstance(changed, ModelChanged)
            assert agent.capabilities is None


async def test_an_unknown_render_kind_never_breaks_the_client(tmp_path: Path):
    """A tool_result whose RenderDescriptor kind is unknown arrives as a typed ToolResult, the raw
    descriptor kept aside; the stream goes on.

    Covers: R11.0.13
    """
    async with Peer(tmp_path / "fake.sock") as peer:
        peer.answer = lambda c: attach_ok(c) if c["type"] == "agent.attach" else []
        async with await ShardClient.connect_unix(peer.path) as client:
            agent = await client.attach(AGENT)
            stream = agent.subscribe()
            hologram = {"kind": "hologram", "frames": 3}
            result = {"type": "tool_result", "agent_id": AGENT, "tool_call_id": "tc1", "is_error": False}
            await peer.send({**result, "content": {"kind": "text", "text": "ok"}, "render": hologram})
            await peer.send({"type": "status", "agent_id": AGENT, "status": "idle"})
            event = await stream.next(10)
            assert isinstance(event, ToolResult)
            assert event.render is None
            assert (event.model_extra or {})["unknown_render"] == hologram
            assert (await stream.next(10)).type == "status"


async def test_answers_from_a_superseded_runtime_are_discarded(tmp_path: Path):
    """A list_modes is pending when a fresh sync with a new runtime_epoch arrives: the request fails
    with StaleRuntime and the old process's late answer is dropped; the next request is answered.

    Covers: R9.1.17, R9.1.15, R9.1.16
    """
    caps = ["mode-catalog", "mode-switch"]
    modes = {"modes": [{"name": "build", "description": "b"}], "active": "build"}

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.attach":
            return attach_ok(command, capabilities=caps, runtime_epoch=0)
        ok = {
            "type": "response",
            "id": command["id"],
            "command": "list_modes",
            "success": True,
            "agent_id": AGENT,
        }
        if len([c for c in peer.received if c["type"] == "list_modes"]) == 1:
            return [sync(capabilities=caps, runtime_epoch=1), {**ok, "data": modes}]  # the late answer
        return [{**ok, "data": modes}]

    async with Peer(tmp_path / "fake.sock") as peer:
        peer.answer = answer
        async with await ShardClient.connect_unix(peer.path) as client:
            agent = await client.attach(AGENT)
            assert agent.runtime_epoch == 0
            with pytest.raises(StaleRuntime):
                await agent.list_modes()
            assert agent.runtime_epoch == 1
            assert (await agent.list_modes()).active == "build"
            assert client.orchestrator_events().take_ready() == []  # the late answer went nowhere


async def test_streaming_behavior_is_omitted_when_idle(tmp_path: Path):
    """An idle agent's prompt carries no streaming_behavior even when one is given; mid-turn it
    always carries one (follow_up unless told).

    Covers: R9.2.3, R9.2.2, R9.2.1
    """
    assert "streaming_behavior" not in prompt_command("idle", "hi", streaming_behavior="steer").to_wire()
    assert prompt_command("streaming", "hi").to_wire()["streaming_behavior"] == "follow_up"
    assert (
        prompt_command("waiting_for_permission", "hi", streaming_behavior="steer").streaming_behavior
        == "steer"
    )

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.attach":
            return attach_ok(command)
        return [{"type": "response", "id": command["id"], "command": "prompt", "success": True}]

    async with Peer(tmp_path / "fake.sock") as peer:
        peer.answer = answer
        async with await ShardClient.connect_unix(peer.path) as client:
            agent = await client.attach(AGENT)
            await agent.prompt("first", streaming_behavior="steer")
            await peer.send({"type": "status", "agent_id": AGENT, "status": "streaming"})
            stream = agent.subscribe()
            await stream.next(10)
            await agent.prompt("second")
    prompts = [c for c in peer.received if c["type"] == "prompt"]
    assert [p.get("streaming_behavior") for p in prompts] == [None, "follow_up"]
    assert all(p["agent_id"] == AGENT for p in prompts)


async def test_a_request_waiting_when_the_link_drops_fails_and_is_not_replayed(tmp_path: Path):
    """A list_modes is in flight when the connection drops: it fails with ConnectionLost (its
    answer could only come from the old connection), the client reconnects and re-attaches, and
    the command is not sent again.

    Covers: R9.1.17, R2.2.8, R6.4.18
    """
    caps = ["mode-catalog"]
    received = asyncio.Event()

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.attach":
            return attach_ok(command, capabilities=caps)
        received.set()
        return []  # never answered

    async def no_wait(delay: float) -> None:
        await asyncio.sleep(0)

    async with Peer(tmp_path / "fake.sock") as peer:
        peer.answer = answer
        async with await ShardClient.connect_unix(peer.path, sleep=no_wait) as client:
            agent = await client.attach(AGENT)
            stream = agent.subscribe()
            call = asyncio.create_task(agent.list_modes())
            await received.wait()
            client.drop()
            with pytest.raises(ConnectionLost):
                await call
            assert (await stream.next(10)).type == "sync"  # re-attached
            assert client.generation == 2
    assert [c["type"] for c in peer.received] == ["agent.attach", "list_modes", "agent.attach"]

"""Reconnects: a connection cut mid-turn, a daemon restart with the backoff schedule, a wrong
major version. Real daemons, except where a fake server makes a situation the daemon cannot."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.client import ProtocolVersionError, ShardClient, WebSession, choice_for
from shard.client.transcript import message_text
from shard.protocol.events import (
    MessageComplete,
    MessageDelta,
    PermissionRequest,
    PermissionResolved,
    Sync,
    TurnEnd,
    UiRequest,
    UiResolved,
)
from shard.testing.home import text_step, tool_step
from shard.testing.web import enrollment_code

LONG = "".join(f"word{i} " for i in range(80)).strip()  # ~500 characters: 170 deltas of 3


class Sleeps:
    """The reconnect sleep, injected: records each delay and returns at once (``before`` runs
    first when given, e.g. to start a daemon on the N-th attempt)."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.hook: Any = None

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        if self.hook is not None:
            await self.hook(len(self.delays))
        await asyncio.sleep(0)


async def test_a_cut_mid_turn_loses_and_duplicates_nothing(daemon_factory, project: Path):
    """The socket is cut while a message streams. The client reconnects after 1 s (injected),
    re-attaches, and its stream yields the fresh sync (with the text so far) and then the rest, each
    event once: the deltas add up to every message_complete, the transcript equals the session's,
    and prompt-and-wait (running across the cut) returns the whole answer.

    Covers: R2.2.6, R2.2.8, R6.4.4, R6.4.5, R6.4.17, R6.4.18, R6.4.19, R6.4.20, R6.4.21
    """
    daemon = await daemon_factory([text_step(LONG, chunk=3, delay_ms=15)])
    sleeps = Sleeps()
    async with await ShardClient.connect_unix(home=daemon.home, sleep=sleeps) as client:
        agent = await client.create_agent(project, own=False)
        stream = agent.events()
        turn = asyncio.create_task(agent.prompt_and_wait("talk", timeout=60))
        seen: list[Any] = [await stream.next(10)]
        while len([e for e in seen if isinstance(e, MessageDelta)]) < 10:
            seen.append(await stream.next(10))
        cut_at = len(seen)
        cut_message = seen[-1].message_id
        client.drop()  # the socket dies under the client, as a network failure would
        while not isinstance(seen[-1], TurnEnd):
            seen.append(await stream.next(20))
        result = await turn

        assert sleeps.delays == [1.0]
        assert client.generation == 2
        syncs = [i for i, e in enumerate(seen) if isinstance(e, Sync)]
        assert len(syncs) == 2
        assert syncs[0] == 0
        assert syncs[1] >= cut_at
        resync = seen[syncs[1]]
        assert resync.streaming is not None
        assert resync.streaming.message_id == cut_message  # re-attached mid-message
        after = [e for e in seen[syncs[1] + 1 :] if isinstance(e, MessageDelta)]
        assert after
        assert all(e.message_id == cut_message for e in after)
        assert agent.transcript.mismatches == []
        (complete,) = [e for e in seen if isinstance(e, MessageComplete) and e.message.role == "assistant"]
        assert message_text(complete.message) == LONG
        assert result.text == LONG

        async with await ShardClient.connect_unix(home=daemon.home) as fresh:
            window = (await fresh.attach(agent.agent_id or "", role="observer")).last_sync
            assert window is not None
            assert agent.transcript.messages == window.live_window.messages
            assert [m.role for m in window.live_window.messages] == ["user", "assistant"]


async def test_reconnect_backs_off_to_30_s_and_reattaches_after_a_restart(daemon_factory, project: Path):
    """The daemon stops; the client retries after 1, 2, 4, 8, 16, 30, 30 s; the daemon comes back
    on the 7th wait; the client says hello again, re-attaches (the runtime is restored) and the
    agent's stream yields a fresh sync, after which a prompt works.

    Covers: R2.2.6, R2.2.7, R2.2.8, R6.4.16, R6.4.17, R6.4.18, R6.4.20
    """
    daemon = await daemon_factory([text_step("before"), text_step("after")])
    sleeps = Sleeps()

    async def restart_on(attempt: int) -> None:
        if attempt == 7:
            await daemon_factory(None)

    sleeps.hook = restart_on
    async with await ShardClient.connect_unix(home=daemon.home, sleep=sleeps) as client:
        agent = await client.create_agent(project, own=False)
        stream = agent.events()
        assert isinstance(await stream.next(10), Sync)
        assert (await agent.prompt_and_wait("one", timeout=30)).text == "before"
        await daemon.stop()
        event = await stream.next(60)
        while not isinstance(event, Sync):
            event = await stream.next(60)
        assert sleeps.delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
        assert client.generation == 2
        assert [m.role for m in event.live_window.messages] == ["user", "assistant"]
        assert (await agent.prompt_and_wait("two", timeout=30)).text == "after"


async def _fake_server(path: Path, versions: list[str], connections: list[int]) -> asyncio.Server:
    """Says hello with the next version of ``versions`` to each connection, then reads until EOF."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        version = versions[min(len(connections), len(versions) - 1)]
        connections.append(1)
        hello = {"type": "hello", "protocol_version": version, "server_version": "fake", "capabilities": []}
        writer.write(orjson.dumps(hello) + b"\n")
        await writer.drain()
        await reader.read()  # until the client goes away
        writer.close()

    return await asyncio.start_unix_server(handle, str(path))


async def test_a_different_major_version_is_refused(tmp_path: Path):
    """hello says 1.0.0: the client disconnects with ProtocolVersionError naming both versions.

    Covers: R7.11, R6.4.17, R8.11
    """
    connections: list[int] = []
    server = await _fake_server(tmp_path / "fake.sock", ["1.0.0"], connections)
    async with server:
        with pytest.raises(ProtocolVersionError) as info:
            await ShardClient.connect_unix(tmp_path / "fake.sock")
        assert info.value.server_version == "1.0.0"
        assert "1.0.0" in str(info.value)
        assert "0.x" in str(info.value)
        assert connections == [1]


async def test_a_reconnect_to_a_different_major_ends_the_streams(tmp_path: Path):
    """The first hello is 0.1.0; after a drop the server says 2.0.0: the client stops (no further
    attempt) and its streams end with ProtocolVersionError.

    Covers: R7.11, R6.4.17
    """
    connections: list[int] = []
    sleeps = Sleeps()
    server = await _fake_server(tmp_path / "fake.sock", ["0.1.0", "2.0.0"], connections)
    async with server:
        client = await ShardClient.connect_unix(tmp_path / "fake.sock", sleep=sleeps)
        events = client.orchestrator_events()
        client.drop()
        with pytest.raises(ProtocolVersionError):
            await events.next(10)
        assert connections == [1, 1]
        assert sleeps.delays == [1.0]
        await client.close()


async def test_a_drop_mid_permission_ask_can_still_be_answered(daemon_factory, project: Path):
    """The connection drops while a permission request is open; after the reconnect the re-attach
    sync reports waiting_for_permission and holds the request, the client answers it by choice_id,
    and permission_resolved follows.

    Covers: R12.6.1, R12.6.2, R12.6.3, R6.4.22, R6.4.23, R6.4.25, R2.2.8
    """
    steps = [tool_step("touch", {"path": "late.txt"}), text_step("Done after all.")]
    daemon = await daemon_factory(steps)
    sleeps = Sleeps()
    async with await ShardClient.connect_unix(home=daemon.home, sleep=sleeps) as client:
        agent = await client.create_agent(project)
        stream = agent.subscribe()
        await agent.prompt("make late.txt")
        asked = await stream.next(20)
        while not isinstance(asked, PermissionRequest):
            asked = await stream.next(20)
        client.drop()
        resync = await stream.next(20)
        while not isinstance(resync, Sync):
            resync = await stream.next(20)
        assert resync.status == "waiting_for_permission"
        assert [r.request_id for r in resync.pending_requests] == [asked.request_id]
        assert list(agent.pending) == [asked.request_id]
        await agent.answer_permission(asked.request_id, choice_id=choice_for(asked, "allow"))
        resolved = await stream.next(20)
        while not isinstance(resolved, PermissionResolved):
            resolved = await stream.next(20)
        assert resolved.request_id == asked.request_id
        assert agent.pending == {}
        while not isinstance(await stream.next(20), TurnEnd):
            pass
        assert (project / "late.txt").exists()
        assert client.generation == 2


async def test_the_websocket_reconnects_with_a_fresh_ticket(daemon_factory, project: Path):
    """Over the WebSocket a drop is followed by a new /bootstrap ticket (tickets are single use),
    hello, and the re-attach sync; a UI request is then answered on the new connection.

    Covers: R2.2.8, R4.1.0.7, R4.1.0.9, R6.3.7, R6.4.18
    """
    ask = tool_step("ask", {"kind": "select", "title": "Pick", "options": ["a", "b"]})
    daemon = await daemon_factory([ask, text_step("Picked.")])
    code = await enrollment_code(daemon.socket)
    session = await WebSession.enroll(f"http://127.0.0.1:{daemon.port}/enroll#code={code}")
    sleeps = Sleeps()
    async with await ShardClient.connect_websocket(session, home=daemon.home, sleep=sleeps) as client:
        agent = await client.create_agent(project)
        stream = agent.events()
        assert isinstance(await stream.next(10), Sync)
        client.drop()
        assert isinstance(await stream.next(20), Sync)
        assert client.generation == 2

        turn = asyncio.create_task(agent.prompt_and_wait("choose", timeout=30))
        event = await stream.next(20)
        while not isinstance(event, UiRequest):
            event = await stream.next(20)
        await agent.answer_ui(event.request_id, "b")
        result = await turn
        assert result.text == "Picked."
        assert any(isinstance(e, UiResolved) and e.value == "b" for e in result.events)


async def test_detach_ends_the_stream_and_the_agent_goes_on(daemon_factory, project: Path):
    """After detach the agent's stream ends and no re-attach happens on a reconnect.

    Covers: R6.1.4, R10.1.21, R12.3.3
    """
    daemon = await daemon_factory([text_step("hi")])
    sleeps = Sleeps()
    async with await ShardClient.connect_unix(home=daemon.home, sleep=sleeps) as client:
        agent = await client.create_agent(project, own=False)
        stream = agent.events()
        assert isinstance(await stream.next(10), Sync)
        await client.detach(agent.agent_id or "")
        with pytest.raises(StopAsyncIteration):
            await stream.__anext__()
        client.drop()
        assert await client.list_agents() != []
        assert client.generation == 2
        assert agent.agent_id not in client.agents

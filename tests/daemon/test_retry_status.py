"""A provider retry reaches every client of a daemon as it happens — the delay and the cause in words
— and clears when the wait is over: the raw unix and WebSocket clients get the ``status`` with its
``detail``, every connection the ``agent_status_changed`` and the ``retrying`` activity, a client
attaching mid-wait gets it in its ``sync`` (the SDK's ``status_detail``), and the abort that ends
the wait clears it everywhere. A real daemon and a local provider server answering 503 with a long
Retry-After, so the wait outlasts every step of the test."""

from __future__ import annotations

from pathlib import Path

from daemon_helpers import attach, create_agent

from agent.providers._server import Fail, ProviderServer
from agent.providers._support import provider_toml, write_home
from shard.client import ShardClient
from shard.protocol.events import Status
from shard.testing import DaemonProcess

DETAIL = "retrying in 20.0 s: HTTP 503 (attempt 2 of 3)"
RETRY = "[retry]\nmax_attempts = 3\nbase_delay = 0.01\nmax_delay = 60\n"  # Retry-After is honoured
BUSY = {"error": {"message": "The server is busy.", "type": "server_error"}}


def _retrying(message: dict) -> bool:
    return message.get("type") == "status" and message.get("detail") == DETAIL


async def test_a_retry_reaches_every_client_and_clears(tmp_path: Path, project: Path) -> None:
    """Covers: R6.2.1, R6.2.2, R6.4.20, R9.1.19, R10.2.13, R10.2.14"""
    server = await ProviderServer.start()
    server.replies.append(Fail(503, BUSY, {"retry-after": "20"}))
    body = provider_toml("local", "openai", server.openai_url, '[{ id = "m" }]', key_env=None)
    home = write_home(tmp_path / "home", body, default_model="local/m", retry=RETRY)
    daemon = await DaemonProcess.start(home)
    try:
        unix, ws, bystander = await daemon.unix(), await daemon.ws(), await daemon.unix()
        agent_id = await create_agent(unix, project)
        await attach(unix, agent_id)
        await attach(ws, agent_id, role="observer")
        await unix.send({"type": "prompt", "id": "p", "agent_id": agent_id, "message": "hello"})
        for client in (unix, ws):
            read = await client.until(_retrying)
            assert read[-1]["status"] == "streaming"
            assert read[-1]["agent_id"] == agent_id
        overview = await bystander.until(
            lambda m: m.get("type") == "agent_activity" and m.get("phase") == "retrying"
        )
        assert overview[-1]["agent_id"] == agent_id
        assert any(
            m.get("type") == "agent_status_changed"
            and m.get("detail") == DETAIL
            and m["agent_id"] == agent_id
            for m in overview
        )
        assert not [m for m in bystander.seen if m.get("type") == "status"], "not attached: no status"

        async with await ShardClient.connect_unix(home=home) as sdk:
            late = await sdk.attach(agent_id, role="observer")  # mid-wait: the sync says it
            assert (late.status, late.status_detail) == ("streaming", DETAIL)
            assert late.last_sync is not None
            assert late.last_sync.status_detail == DETAIL
            events = late.subscribe()
            await unix.send({"type": "abort", "id": "a", "agent_id": agent_id})
            for client in (unix, ws):
                idle = (await client.idle(agent_id=agent_id))[-1]
                assert "detail" not in idle
            while True:
                event = await events.next(20)
                if isinstance(event, Status) and event.status == "idle":
                    break
            events.close()
            assert (late.status, late.status_detail) == ("idle", None)
        assert len(server.requests) == 1, "the abort ended the wait: no second attempt"
    finally:
        await daemon.kill()
        await server.close()

"""Helpers for daemon tests: connect over a transport, create and attach agents."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shard.testing import DaemonProcess


async def connect(daemon: DaemonProcess, transport: str) -> Any:
    return await (daemon.unix() if transport == "unix" else daemon.ws())


async def create_agent(client: Any, cwd: Path, **fields: Any) -> str:
    resp, _ = await client.request({"type": "agent.create", "id": "create", "cwd": str(cwd), **fields})
    assert resp["success"] is True, resp
    return resp["data"]["agent_id"]


async def attach(client: Any, agent_id: str, role: str | None = None) -> tuple[dict, dict]:
    message: dict[str, Any] = {"type": "agent.attach", "id": f"attach-{agent_id}", "agent_id": agent_id}
    if role:
        message["role"] = role
    resp, _ = await client.request(message)
    assert resp["success"] is True, resp
    sync = (await client.until(lambda m: m.get("type") == "sync" and m.get("agent_id") == agent_id))[-1]
    return resp, sync


async def reply_text(client: Any, agent_id: str, message: str = "hi") -> str:
    """Prompt an attached agent and return its reply's text, once its turn has ended."""
    await client.send({"type": "prompt", "id": "p", "agent_id": agent_id, "message": message})
    events = await client.until(lambda m: m.get("type") == "turn_end" and m.get("agent_id") == agent_id)
    return "".join(m.get("text_delta", "") for m in events if m.get("type") == "message_delta")


async def allow(client: Any, agent_id: str, request_id: str) -> None:
    """Answer a permission request: allow."""
    answer = {"type": "permission_response", "agent_id": agent_id, "request_id": request_id}
    await client.send({**answer, "decision": "allow"})


async def mid_turn(daemon: DaemonProcess, cwd: Path, message: str) -> tuple[Any, str, dict]:
    """A client, a new agent in ``cwd`` attached, and its turn on ``message`` started (the first
    delta seen): (client, agent id, sync)."""
    client = await daemon.unix()
    agent = await create_agent(client, cwd)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": message})
    await client.until_type("message_delta")
    return client, agent, sync


def slow_reply(first: str, last: str) -> dict[str, Any]:
    """A scripted reply that pauses 1.5 s between its two texts: a turn still running."""
    return {
        "blocks": [
            {"type": "text", "text": first},
            {"type": "pause", "ms": 1500},
            {"type": "text", "text": last},
        ]
    }


def live_pids(matches: Callable[[list[bytes]], bool]) -> list[int]:
    """Live (not zombie) processes whose command line (its NUL-split parts) ``matches``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and matches(argv):
            found.append(int(entry.name))
    return sorted(found)


def runtime_pids(home: Path) -> list[int]:
    """Live ``shard agent --stdio`` processes whose --home is ``home``."""

    def ours(argv: list[bytes]) -> bool:
        if b"--stdio" not in argv or b"agent" not in argv or b"--home" not in argv:
            return False
        return argv[argv.index(b"--home") + 1] == str(home).encode()

    return live_pids(ours)


async def raw_websocket(daemon: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket upgraded by hand on a plain TCP stream, for a client that stops reading (with a
    ticket of the daemon's enrolled test browser)."""
    port = daemon.port
    ticket = await daemon.ticket()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET /ws HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Protocol: ticket.{ticket}\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


def masked_text_frame(payload: bytes) -> bytes:
    """One client→server text frame (clients must mask, RFC 6455 §5.3)."""
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        head = bytes([0x81, 0x80 | size])
    elif size < 1 << 16:
        head = bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x81, 0x80 | 127]) + size.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

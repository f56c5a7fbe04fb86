"""One client of ``bench/scale.py``, in a process of its own so that no other client's work delays
its reads: it connects (unix socket, or the WebSocket with a ticket the bench bought), attaches to
its agents, says ``ready``, waits for ``go`` on stdin, prompts the agents it drives, and for every
``message_delta`` notes how long ago the runtime stamped it. It leaves once every agent it streams
from has ended its turn, and writes what it saw as JSON to the file it was given.

    python bench/scale_client.py SPEC.json

SPEC: ``{"transport": "unix"|"ws", "socket", "port", "ticket", "attach": [ids], "role",
"prompt": [ids], "streams": [ids whose turns it waits for], "out": path}``.

Stdlib only, and frames are read by hand: a decoding library would cost this process more than the
daemon spends on it, and the receive time would then be the library's, not the socket's. Every
frame of one read gets the time of that read.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from typing import Any

_DELTA = b'"type":"message_delta"'  # after the agent_id the daemon puts first
_TURN_END = b'"type":"turn_end"'
_TEXT = b'"text_delta":"'


class Unix:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._rest = b""

    @classmethod
    async def connect(cls, spec: dict[str, Any]) -> Unix:
        reader, writer = await asyncio.open_unix_connection(spec["socket"], limit=1 << 24)
        return cls(reader, writer)

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")

    async def messages(self) -> list[bytes]:
        chunk = await self.reader.read(1 << 20)
        if not chunk:
            raise EOFError
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        return lines


class Ws:
    """RFC 6455 as a client needs it here: the upgrade, masked text frames out, text frames in,
    pings answered."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._buf = b""
        self._parts: list[bytes] = []

    @classmethod
    async def connect(cls, spec: dict[str, Any]) -> Ws:
        port = spec["port"]
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 24)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                "GET /ws HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\n"
                f"Origin: http://127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Sec-WebSocket-Protocol: shard.v1, ticket.{spec['ticket']}\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode())
        return cls(reader, writer)

    def send(self, message: dict[str, Any]) -> None:
        self._frame(0x1, json.dumps(message).encode())

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(
            n, "big"
        )
        self.writer.write(head + mask + masked)

    async def messages(self) -> list[bytes]:
        chunk = await self.reader.read(1 << 20)
        if not chunk:
            raise EOFError
        buf = self._buf + chunk
        out, at = [], 0
        while len(buf) - at >= 2:
            b0, b1 = buf[at], buf[at + 1]
            n, head = b1 & 0x7F, 2
            if n == 126:
                if len(buf) - at < 4:
                    break
                n, head = int.from_bytes(buf[at + 2 : at + 4], "big"), 4
            elif n == 127:
                if len(buf) - at < 10:
                    break
                n, head = int.from_bytes(buf[at + 2 : at + 10], "big"), 10
            if len(buf) - at < head + n:
                break
            payload = buf[at + head : at + head + n]
            at += head + n
            opcode = b0 & 0x0F
            if opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode == 0x8:
                raise EOFError("closed by the daemon")
            elif opcode in (0x1, 0x0):
                self._parts.append(payload)
                if b0 & 0x80:
                    out.append(b"".join(self._parts))
                    self._parts.clear()
        self._buf = buf[at:]
        return out


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    conn: Unix | Ws = await (Unix if spec["transport"] == "unix" else Ws).connect(spec)
    attach = spec["attach"]
    for i, agent in enumerate(attach):
        conn.send({"type": "agent.attach", "id": f"a{i}", "agent_id": agent, "role": spec["role"]})
    answered = 0
    while answered < len(attach):
        for message in await conn.messages():
            if b'"command":"agent.attach"' in message:
                if b'"success":true' not in message:
                    raise RuntimeError(message[:300].decode())
                answered += 1
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)
    for agent in spec["prompt"]:
        conn.send({"type": "prompt", "agent_id": agent, "message": "go"})
    index = {agent.encode(): i for i, agent in enumerate(attach)}
    waiting = {agent.encode() for agent in spec["streams"]}
    latency_us: list[int] = []
    received_ns: list[int] = []
    agents: list[int] = []
    others = 0
    while waiting:
        batch = await conn.messages()
        now = time.monotonic_ns()
        for message in batch:
            if _DELTA in message[:80]:
                at = message.find(_TEXT)
                if at < 0:
                    continue
                at += len(_TEXT)
                bar = message.find(b"|", at)
                latency_us.append((now - int(message[at:bar])) // 1000)
                received_ns.append(now)
                agents.append(index[_agent_of(message)])
            else:
                others += 1
                if _TURN_END in message:
                    waiting.discard(_agent_of(message))
    return {
        "transport": spec["transport"],
        "attached": len(attach),
        "latency_us": latency_us,
        "received_ns": received_ns,
        "agents": agents,
        "other_frames": others,
    }


def _agent_of(message: bytes) -> bytes:
    at = message.index(b'"agent_id":"') + len(b'"agent_id":"')
    return message[at : message.index(b'"', at)]


def main() -> None:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    result = asyncio.run(run(spec))
    with open(spec["out"], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()

"""The daemon's HTTP/WebSocket boundary against hostile clients on raw sockets (issue 9, item 5):
an over-cap WebSocket message is answered like an over-cap JSONL line and the connection stays; an
unmasked client frame is a protocol error (RFC 6455 §5.1); a request target that is not a path is
refused; a duplicate Host is refused; malformed requests cost at most one log line each, never a
traceback, and a flood of them cannot grow the log without bound; fragmentation, ping/pong and the
pong timeout work on the wire."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import struct
from enum import IntEnum
from typing import Any

import orjson
import pytest

from shard.testing import DaemonProcess

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime

MASK = b"\x0f\xa5\x5a\xf0"
WAIT = 30.0  # a generous ceiling for an awaited event, never a measured duration


class Opcode(IntEnum):
    CONTINUATION = 0x0
    TEXT = 0x1
    CLOSE = 0x8
    PING = 0x9
    PONG = 0xA


def client_frame(opcode: int, payload: bytes, *, fin: bool = True, mask: bytes | None = MASK) -> bytes:
    """A frame as RFC 6455 §5.2 lays it out, written here independently of the daemon's codec."""
    head = bytearray([(0x80 if fin else 0) | opcode])
    bit = 0x80 if mask is not None else 0
    if len(payload) < 126:
        head.append(bit | len(payload))
    elif len(payload) < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", len(payload))
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", len(payload))
    if mask is None:
        return bytes(head) + payload
    return bytes(head) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def accept_for(key: bytes) -> bytes:
    return base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())


def upgrade_request(
    port: int, *, target: str = "/ws", extra: tuple[str, ...] = (), host: str | None = None
) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {target} HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{port}'}",
        f"Origin: http://127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def http_exchange(port: int, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as is; (status, what the daemon sent): everything until it closed, or just
    the head of a 101 (an upgraded connection stays open)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(12), WAIT)
        while len(data) < 12 and (more := await asyncio.wait_for(reader.read(12), WAIT)):
            data += more
        assert data.startswith(b"HTTP/1."), data
        status = int(data[9:12])
        if status != 101:
            data += await asyncio.wait_for(reader.read(), WAIT)
    finally:
        writer.close()
    return status, data


class RawWs:
    """A WebSocket client with nothing in between: it frames (and may misframe) every byte itself."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, daemon: DaemonProcess) -> RawWs:
        """Upgraded with a ticket of the daemon's enrolled test browser."""
        port = daemon.port
        ticket = await daemon.ticket()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = upgrade_request(port, extra=(f"Sec-WebSocket-Protocol: ticket.{ticket}",))
        writer.write(request)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
        assert head.startswith(b"HTTP/1.1 101 "), head
        key = request.split(b"Sec-WebSocket-Key: ")[1].split(b"\r\n")[0]
        assert b"Sec-WebSocket-Accept: " + accept_for(key) in head
        ws = cls(reader, writer)
        assert (await ws.message())["type"] == "hello"
        return ws

    def send(self, opcode: int, payload: bytes, *, fin: bool = True, mask: bytes | None = MASK) -> None:
        self.writer.write(client_frame(opcode, payload, fin=fin, mask=mask))

    def send_json(self, message: dict[str, Any]) -> None:
        self.send(Opcode.TEXT, orjson.dumps(message))

    async def frame(self) -> tuple[int, bytes] | None:
        """The next server frame as (opcode, payload); None once the daemon closed the socket."""
        try:
            b0, b1 = await asyncio.wait_for(self.reader.readexactly(2), WAIT)
            assert not b1 & 0x80, "server frames are never masked"
            size = b1 & 0x7F
            if size == 126:
                size = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            assert b0 & 0x80, "the server never fragments"
            return b0 & 0x0F, await self.reader.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            return None

    async def message(self) -> dict[str, Any]:
        """The next text message, answering pings on the way."""
        while True:
            frame = await self.frame()
            assert frame is not None, "the daemon closed the connection"
            opcode, payload = frame
            if opcode == Opcode.PING:
                self.send(Opcode.PONG, payload)
                continue
            assert opcode == Opcode.TEXT, frame
            return orjson.loads(payload)

    async def closed(self) -> bool:
        """True once the socket is at EOF (whatever frames came first are skipped)."""
        while await self.frame() is not None:
            pass
        return True

    def close(self) -> None:
        self.writer.close()


STOP_LINES = ("shard daemon: stopping…", "shard daemon: stopped")  # what the test's own stop prints


async def stopped_output(daemon: DaemonProcess) -> list[str]:
    """Everything the daemon printed once it listened (its startup notices and the lines of the
    stop this asks for left out), once it has stopped."""
    await daemon.stop()
    return [line for line in daemon.output[len(daemon.startup) :] if line not in STOP_LINES]


# --- the input cap ---------------------------------------------------------------------------------


async def test_an_over_cap_ws_message_is_answered_invalid_request_and_the_connection_stays(start_daemon):
    """A text message over the input cap (here --max-input-bytes 4096) gets the same answer an
    over-cap line gets on the unix socket: response{success:false, INVALID_REQUEST} carrying the
    message's id and type, read from its first bytes, whether it came as one frame or as 200
    fragments; the same connection then answers agent.list.

    Covers: R8.1, R8.5
    """
    daemon = await start_daemon("--max-input-bytes", "4096")
    big = orjson.dumps({"type": "prompt", "id": "too-big", "agent_id": "agent-x", "message": "x" * 20_000})
    ws = await RawWs.open(daemon)
    ws.send(Opcode.TEXT, big)
    whole = await ws.message()
    parts = [big[i : i + 100] for i in range(0, len(big), 100)]
    for i, part in enumerate(parts):
        ws.send(Opcode.TEXT if i == 0 else Opcode.CONTINUATION, part, fin=i == len(parts) - 1)
    fragmented = await ws.message()
    ws.send_json({"type": "agent.list", "id": "after"})
    after = await ws.message()
    unix = await daemon.unix()
    await unix.send_raw(big + b"\n")
    on_unix = await unix.next()
    ws.close()
    for answer in (whole, fragmented):
        assert answer["type"] == "response", answer
        assert answer["success"] is False, answer
        assert answer["error"]["code"] == "INVALID_REQUEST", answer
        assert (answer["id"], answer["command"]) == ("too-big", "prompt"), answer
        assert answer == on_unix
    assert (after["id"], after["success"]) == ("after", True), after


async def test_the_daemon_takes_its_input_cap_from_config_toml(start_daemon, tmp_path):
    """Without --max-input-bytes, ``[limits] max_input_bytes`` in config.toml is the daemon's input
    cap too, on both transports: a 6 KB command is refused under a 4096-byte cap."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    config = home / "config.toml"
    config.write_text("[limits]\nmax_input_bytes = 4096\n")
    config.chmod(0o600)
    daemon = await start_daemon()
    big = orjson.dumps({"type": "agent.list", "id": "six-kb", "pad": "x" * 6000})
    ws = await RawWs.open(daemon)
    ws.send(Opcode.TEXT, big)
    on_ws = await ws.message()
    ws.close()
    unix = await daemon.unix()
    await unix.send_raw(big + b"\n")
    on_unix = await unix.next()
    for answer in (on_ws, on_unix):
        assert (answer["id"], answer["success"]) == ("six-kb", False), answer
        assert answer["error"]["code"] == "INVALID_REQUEST", answer


# --- framing rules ---------------------------------------------------------------------------------


async def test_an_unmasked_client_frame_closes_with_1002(start_daemon):
    """RFC 6455 §5.1: a client frame without a mask fails the connection: the daemon sends a close
    frame with status 1002, does not execute the frame's command, and closes the socket."""
    daemon = await start_daemon()
    ws = await RawWs.open(daemon)
    ws.send(Opcode.TEXT, b'{"type":"agent.list","id":"unmasked"}', mask=None)
    frame = await ws.frame()
    assert frame is not None
    opcode, payload = frame
    assert opcode == Opcode.CLOSE, frame
    assert struct.unpack("!H", payload[:2])[0] == 1002, payload
    assert await ws.frame() is None, "the socket is closed after the close frame"
    ws.close()


async def test_fragments_pings_and_the_close_handshake_on_the_wire(start_daemon):
    """A command in three fragments with a ping between them is one command; the ping gets a pong
    with its payload at once; every data frame the daemon sends is text; a close frame from the
    client is answered with a close frame carrying its code, and the daemon closes the socket.

    Covers: R2.2.1, R2.2.2
    """
    daemon = await start_daemon()
    ws = await RawWs.open(daemon)
    command = b'{"type":"agent.list","id":"in-parts"}'
    ws.send(Opcode.TEXT, command[:10], fin=False)
    ws.send(Opcode.PING, b"are you there")
    ws.send(Opcode.CONTINUATION, command[10:20], fin=False)
    ws.send(Opcode.CONTINUATION, command[20:])
    frames = [await ws.frame(), await ws.frame()]
    assert frames[0] == (Opcode.PONG, b"are you there"), frames
    assert frames[1] is not None
    assert frames[1][0] == Opcode.TEXT, frames
    resp = orjson.loads(frames[1][1])
    assert (resp["id"], resp["success"]) == ("in-parts", True), resp
    ws.send(Opcode.CLOSE, struct.pack("!H", 1000) + b"bye")
    assert await ws.frame() == (Opcode.CLOSE, struct.pack("!H", 1000))
    assert await ws.frame() is None
    ws.close()


async def test_a_client_that_never_pongs_is_dropped_and_one_that_does_stays(start_daemon):
    """With --ws-ping-interval 0.5 the daemon pings every client; one that never answers is
    dropped (its socket closed) while one that answers every ping keeps being served.

    Covers: R2.2.3, R2.2.5
    """
    daemon = await start_daemon("--ws-ping-interval", "0.5")
    silent = await RawWs.open(daemon)
    live = await RawWs.open(daemon)
    answered = asyncio.Event()
    replies: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def keep_answering() -> None:
        pongs = 0
        while (frame := await live.frame()) is not None:
            if frame[0] == Opcode.PING:
                live.send(Opcode.PONG, frame[1])
                pongs += 1
                if pongs == 3:
                    answered.set()
            elif frame[0] == Opcode.TEXT:
                await replies.put(orjson.loads(frame[1]))
        await replies.put(None)

    answering = asyncio.ensure_future(keep_answering())
    try:
        silent_frames = []
        while (frame := await silent.frame()) is not None:
            silent_frames.append(frame[0])
        assert Opcode.PING in silent_frames, silent_frames
        assert Opcode.PONG not in silent_frames
        await asyncio.wait_for(answered.wait(), WAIT)
        live.send_json({"type": "agent.list", "id": "still-here"})
        reply = await asyncio.wait_for(replies.get(), WAIT)
        assert reply is not None, "the client that answers pings is kept"
        assert (reply["id"], reply["success"]) == ("still-here", True), reply
    finally:
        answering.cancel()
        silent.close()
        live.close()


# --- the request target and Host ------------------------------------------------------------------


async def test_a_request_target_that_is_not_a_path_is_400(start_daemon):
    """Only origin-form targets (``/ws``) are served: an absolute-form target (which would make a
    proxy-style reader take the host from the URL, not from Host) is 400 with no upgrade, whatever
    host it names, and so are the authority and asterisk forms.

    Covers: R4.1.0.16, R4.1.0.17, R4.1.1.2
    """
    daemon = await start_daemon()
    port = daemon.port
    for target in (
        "http://evil.example/ws",
        f"http://127.0.0.1:{port}/ws",
        f"ws://127.0.0.1:{port}/ws",
        f"127.0.0.1:{port}",
        "*",
    ):
        status, data = await http_exchange(port, upgrade_request(port, target=target))
        assert status == 400, (target, data[:200])
        assert b"Sec-WebSocket-Accept" not in data
    ws = await RawWs.open(daemon)  # the same request with a path is accepted
    ws.close()


async def test_a_duplicate_host_header_is_400_without_a_traceback(start_daemon):
    """Two Host headers, equal or not and in either order, are refused with 400; the refusal costs
    no traceback.

    Covers: R4.1.0.16, R4.1.1.2
    """
    daemon = await start_daemon()
    port = daemon.port
    right = f"Host: 127.0.0.1:{port}"
    for second in (right, "Host: evil.example", f"host: 127.0.0.1:{port}"):
        status, data = await http_exchange(port, upgrade_request(port, extra=(second,)))
        assert status == 400, (second, data[:200])
        assert b"Sec-WebSocket-Accept" not in data
    output = await stopped_output(daemon)
    assert not any("Traceback" in line for line in output), output


# --- malformed requests and the log ----------------------------------------------------------------

MALFORMED = [
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)) + b"\r\n\r\n",  # a TLS hello
    b"\x00" * 64 + b"\r\n\r\n",
    b"\xff\xfe\xfd garbage \x80\x81\r\n\r\n",
    b"GET /ws HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",  # no colon
    b"GET /ws HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /ws HTTP/1.1\r\nHo st: x\r\n\r\n",
    b"GET /ws HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    b"GET /\xc3\x28 HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /ws HTTP/1.1\r\nHost: a\r\nX: " + b"a" * 40_000 + b"\r\n\r\n",  # past the 16 KB head cap
]


async def test_malformed_requests_cost_at_most_one_line_each_and_no_traceback(start_daemon):
    """Garbage, a TLS hello, a header without a colon, a bad version, an illegal header name,
    duplicate Content-Length, a non-UTF-8 target and an oversized head are each answered 400 (431
    for the head, 505 for the version) and closed, and cost at most one line on the daemon's
    output, never a traceback; hostile but well-formed header values (non-UTF-8 Host and Origin)
    are a plain 400. The daemon still serves a fresh WebSocket client afterwards."""
    daemon = await start_daemon()
    port = daemon.port
    for request in MALFORMED:
        status, _ = await http_exchange(port, request)
        assert status in (400, 431, 505), (request[:60], status)
    hostile = f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n".encode()
    hostile += b"Origin: \xff\xfe\xc3\x28\r\n\r\n"
    assert (await http_exchange(port, hostile))[0] == 400
    ws = await RawWs.open(daemon)
    ws.send_json({"type": "agent.list", "id": "fresh"})
    assert (await ws.message())["success"] is True
    ws.close()
    output = await stopped_output(daemon)
    assert len(output) <= len(MALFORMED), "\n".join(output)
    assert all(line.startswith("shard daemon: ") for line in output), output
    assert not any("Traceback" in line for line in output), output


async def test_a_flood_of_malformed_requests_cannot_grow_the_log_without_bound(start_daemon):
    """500 malformed requests in a row: every one is refused, and the daemon's log grows by a
    bounded number of lines (the rate limit: 10 a minute, then a count), with no traceback."""
    daemon = await start_daemon()
    for i in range(500):
        status, _ = await http_exchange(daemon.port, MALFORMED[i % len(MALFORMED)])
        assert status in (400, 431, 505)
    output = await stopped_output(daemon)
    assert len(output) <= 15, output
    assert not any("Traceback" in line for line in output), output

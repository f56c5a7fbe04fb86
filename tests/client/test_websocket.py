"""The SDK's WebSocket: pings answered on a live daemon, a server that breaks RFC 6455 refused with
its close code, tickets and refusals (the frames themselves: tests/protocol/test_wsframe_client.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from shard.client import AuthError, ShardClient, WebSession
from shard.client.websocket import WebSocketTransport
from shard.daemon.websocket import accept_key
from shard.protocol.wsframe import Close, Opcode, ServerCodec, encode_frame
from shard.testing.home import text_step
from shard.testing.web import enrollment_code

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime


async def test_a_server_that_masks_its_frames_is_closed_with_1002():
    """A server frame that is masked breaks RFC 6455 §5.1: the transport fails the connection with
    a 1002 close frame saying why, and reads no message after it; the frames before it were read.

    Covers: R2.2.1
    """
    got: asyncio.Queue[bytes] = asyncio.Queue()

    async def bad_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        key = head.split(b"Sec-WebSocket-Key: ")[1].split(b"\r\n")[0]
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + f"Sec-WebSocket-Accept: {accept_key(key)}\r\n\r\n".encode()
        )
        masked = encode_frame(Opcode.TEXT, b'{"type":"masked"}', mask=b"\x01\x02\x03\x04")
        writer.write(ServerCodec().text(b'{"type":"first"}') + masked)
        got.put_nowait(await reader.read(1 << 16))
        writer.close()

    listener = await asyncio.start_server(bad_server, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        transport = await WebSocketTransport.open("127.0.0.1", port, ticket="t")
        assert await transport.recv() == b'{"type":"first"}'
        assert await transport.recv() is None
        reader = ServerCodec()
        (goodbye,) = reader.feed(await asyncio.wait_for(got.get(), 10))
        assert isinstance(goodbye, Close)
        assert goodbye.code == 1002
        assert "masked" in goodbye.reason
        await transport.close()


async def test_pings_are_answered_and_the_connection_stays(daemon_factory):
    """The daemon pings every 0.2 s here and drops a client whose pong is late; the SDK answers
    each ping, so after several pings the first connection still serves requests.

    Covers: R2.2.4, R2.2.3, R3.1
    """
    daemon = await daemon_factory([text_step("hi")], "--ws-ping-interval", "0.2")
    code = await enrollment_code(daemon.socket)
    session = await WebSession.enroll(f"http://127.0.0.1:{daemon.port}/enroll#code={code}")
    async with await ShardClient.connect_websocket(session, port=daemon.port) as client:
        transport = client.connection.transport
        assert isinstance(transport, WebSocketTransport)
        five = asyncio.Event()
        transport.on_ping = lambda count: five.set() if count >= 5 else None
        await asyncio.wait_for(five.wait(), 20)
        assert await client.list_agents() == []
        assert client.generation == 1


async def test_a_used_or_missing_ticket_is_refused(daemon_factory):
    """A ticket is single use: offering it twice is refused with 401 (AuthError); a session cookie
    that is not enrolled buys no ticket.

    Covers: R4.1.0.7, R4.1.0.9, R4.1.0.13
    """
    daemon = await daemon_factory([text_step("hi")])
    code = await enrollment_code(daemon.socket)
    session = await WebSession.enroll(f"http://127.0.0.1:{daemon.port}/enroll#code={code}")
    ticket = await session.ticket()

    async def once() -> str:
        return ticket

    async with await ShardClient.connect_websocket(once, port=daemon.port) as client:
        assert client.generation == 1
    with pytest.raises(AuthError) as info:
        await ShardClient.connect_websocket(once, port=daemon.port)
    assert info.value.status == 401
    forged = WebSession(session.host, session.port, "shard_session=forged", session.origin)
    with pytest.raises(AuthError):
        await forged.ticket()


def test_a_session_saved_to_disk_is_owner_only(tmp_path: Path):
    """The cookie and the origin proof are credentials: saved 0600 (also over a file that was
    there, readable by others), never in repr."""
    session = WebSession("127.0.0.1", 1234, "name=secret-value", "http://127.0.0.1:1234", "proof-value")
    path = tmp_path / "session.json"
    path.write_text("{}")
    path.chmod(0o644)
    session.save(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert WebSession.load(path) == session
    assert "secret-value" not in repr(session)
    assert "proof-value" not in repr(session)


async def test_the_session_carries_its_origin_proof_and_needs_it(daemon_factory, tmp_path: Path):
    """Enrolling gives the session the daemon's origin proof; saved and loaded it still buys
    tickets; the same cookie without it (a session file an older SDK saved) is refused with 401 and
    the daemon's line saying to enroll again.

    Covers: R4.1.0.7
    """
    daemon = await daemon_factory([text_step("hi")])
    code = await enrollment_code(daemon.socket)
    session = await WebSession.enroll(f"http://127.0.0.1:{daemon.port}/enroll#code={code}")
    assert len(session.proof) == 43
    path = tmp_path / "session.json"
    session.save(path)
    assert isinstance(await WebSession.load(path).ticket(), str)
    old = orjson.loads(path.read_bytes())
    del old["proof"]
    path.write_bytes(orjson.dumps(old))
    with pytest.raises(AuthError) as info:
        await WebSession.load(path).ticket()
    assert info.value.status == 401
    assert "enroll this browser again" in str(info.value)

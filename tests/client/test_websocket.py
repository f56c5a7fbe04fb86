"""The SDK's WebSocket: its RFC 6455 frames checked against the daemon's own server codec, pings
answered on a live daemon, tickets and refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from shard.client import AuthError, ShardClient, WebSession, wsframes
from shard.client.websocket import WebSocketTransport
from shard.daemon import wsframes as server
from shard.testing.home import text_step
from shard.testing.web import enrollment_code


def test_client_frames_are_masked_and_read_by_the_server_codec():
    """Every client frame is masked; the server codec reads text, pong and close back intact,
    whatever the payload size (7-bit, 16-bit and 64-bit lengths).

    Covers: R2.2.1, R2.2.4
    """
    reader = server.FrameReader()
    big = b'{"type":"prompt","message":"' + b"x" * 70_000 + b'"}'
    events = reader.feed(wsframes.text(b'{"type":"agent.list"}') + wsframes.text(big) + wsframes.pong(b"p1"))
    assert events == [server.Text(b'{"type":"agent.list"}'), server.Text(big), server.Pong(b"p1")]
    assert reader.feed(wsframes.close(1000))[0] == server.Close(1000, "")
    assert wsframes.text(b"a")[1] & 0x80  # the mask bit


def test_server_frames_are_read_fragmented_or_whole():
    """Server text frames (one, or fragmented with a ping in between) come out as whole
    messages; a ping is reported to be answered; binary frames are dropped.

    Covers: R2.2.1, R2.2.2
    """
    frames = wsframes.ClientFrames()
    data = (
        server.encode_frame(server.Opcode.TEXT, b'{"a":', fin=False)
        + server.ping_frame(b"hb")
        + server.encode_frame(server.Opcode.CONTINUATION, b"1}")
        + server.encode_frame(server.Opcode.BINARY, b"\x00")
        + server.text_frame(b"{}")
    )
    out = []
    for i in range(len(data)):  # byte by byte: no frame boundary is assumed
        out += frames.feed(data[i : i + 1])
    assert out == [wsframes.Ping(b"hb"), wsframes.Text(b'{"a":1}'), wsframes.Text(b"{}")]
    assert frames.binary_dropped == 1


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

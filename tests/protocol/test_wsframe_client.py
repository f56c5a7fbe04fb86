"""The sans-I/O WebSocket codec's client side (``shard.protocol.wsframe.ClientCodec``), without
sockets: what it sends is masked and read back by the server side, what a server may not send
(masked frames, every malformed frame, a message over the cap) fails with its close code, and
fragments with control frames between them come out as whole messages."""

from __future__ import annotations

import struct
from itertools import count

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.protocol.wsframe import (
    Binary,
    ClientCodec,
    Close,
    Opcode,
    Ping,
    Pong,
    ServerCodec,
    Text,
    Violation,
    encode_frame,
)


def server(opcode: int, payload: bytes, *, fin: bool = True, mask: bytes | None = None) -> bytes:
    """A frame as a server sends it: unmasked."""
    return encode_frame(opcode, payload, fin=fin, mask=mask)


def feed_bytewise(codec: ClientCodec, data: bytes) -> list:
    events = []
    for i in range(len(data)):
        events += codec.feed(data[i : i + 1])
    return events


def client_violation(data: bytes, max_message: int = 1 << 20) -> Violation:
    """The single event a server stream that breaks a rule yields; byte by byte gives the same,
    and the codec takes nothing after it."""
    codec = ClientCodec(max_message)
    whole = codec.feed(data)
    assert len(whole) == 1, whole
    assert isinstance(whole[0], Violation), whole
    assert codec.done
    assert codec.feed(server(Opcode.TEXT, b"{}")) == []
    assert feed_bytewise(ClientCodec(max_message), data) == whole
    return whole[0]


# --- what a client sends --------------------------------------------------------------------------


def test_client_frames_are_masked_and_read_by_the_server_codec():
    """Every client frame is masked; the server codec reads text, pong and close back intact,
    whatever the payload size (7-bit, 16-bit and 64-bit lengths).

    Covers: R2.2.1, R2.2.4
    """
    sent = ClientCodec()
    reader = ServerCodec()
    big = b'{"type":"prompt","message":"' + b"x" * 70_000 + b'"}'
    mid = b'{"type":"prompt","message":"' + b"y" * 300 + b'"}'
    frames = sent.text(b'{"type":"agent.list"}') + sent.text(mid) + sent.text(big) + sent.pong(b"p1")
    events = reader.feed(frames)
    assert events == [Text(b'{"type":"agent.list"}'), Text(mid), Text(big), Pong(b"p1")]
    assert reader.feed(sent.close(1000))[0] == Close(1000, "")
    assert sent.text(b"a")[1] & 0x80  # the mask bit
    assert b"x" * 100 not in sent.text(big)  # the payload travels masked


def test_each_client_frame_takes_a_fresh_mask():
    """RFC 6455 §5.3: a new, unpredictable key for each frame; with the keys pinned the bytes are
    exactly the head, the key and the payload XORed with it."""
    keys = (bytes((n, n, n, n)) for n in count(1))
    codec = ClientCodec(new_mask=lambda: next(keys))
    assert codec.text(b"ab") == b"\x81\x82\x01\x01\x01\x01" + bytes((ord("a") ^ 1, ord("b") ^ 1))
    assert codec.ping(b"") == b"\x89\x80\x02\x02\x02\x02"
    assert codec.close(1000)[2:6] == b"\x03\x03\x03\x03"
    random = ClientCodec()
    assert len({random.text(b"same")[2:6] for _ in range(8)}) > 1


# --- what a server may not send -------------------------------------------------------------------


def test_a_masked_server_frame_is_1002():
    """RFC 6455 §5.1: a client must fail the connection on a masked server frame, with 1002."""
    for opcode in (Opcode.TEXT, Opcode.PING, Opcode.CLOSE):
        problem = client_violation(server(opcode, b"", mask=b"\x01\x02\x03\x04"))
        assert problem.code == 1002
        assert "must not be masked" in problem.reason


_MALFORMED = {
    "a reserved bit": bytes((0x81 | 0x40, 2)) + b"{}",
    "an unknown opcode": server(0x3, b"x"),
    "a control frame over 125 bytes": server(Opcode.PING, b"p" * 126),
    "a fragmented control frame": server(Opcode.PING, b"", fin=False),
    "a continuation with no message": server(Opcode.CONTINUATION, b"x"),
    "a new message inside a fragmented one": server(Opcode.TEXT, b"{", fin=False) + server(Opcode.TEXT, b"}"),
    "a 64-bit length with its top bit set": bytes((0x81, 127)) + struct.pack("!Q", 1 << 63),
    "a 16-bit length that fits 7 bits": bytes((0x81, 126)) + struct.pack("!H", 5) + b"x" * 5,
    "a 64-bit length that fits 16 bits": bytes((0x81, 127)) + struct.pack("!Q", 300) + b"x" * 300,
    "a one-byte close payload": server(Opcode.CLOSE, b"\x03"),
    "a close code that may not be sent (1005)": server(Opcode.CLOSE, struct.pack("!H", 1005)),
    "a close code out of range": server(Opcode.CLOSE, struct.pack("!H", 999)),
}


@pytest.mark.parametrize("stream", list(_MALFORMED.values()), ids=list(_MALFORMED))
def test_each_malformed_server_frame_is_1002(stream: bytes):
    assert client_violation(stream).code == 1002


def test_text_or_a_close_reason_that_is_not_utf8_is_1007():
    assert client_violation(server(Opcode.TEXT, b'{"id":"\xff"}')).code == 1007
    split = server(Opcode.TEXT, b'{"a":"\xc3', fin=False) + server(Opcode.CONTINUATION, b'\xff"}')
    assert client_violation(split).code == 1007
    assert client_violation(server(Opcode.CLOSE, struct.pack("!H", 1000) + b"\xff")).code == 1007


def test_a_message_over_the_cap_is_1009_and_never_held():
    """A client has nobody to answer an over-cap message to: it fails the connection with 1009 as
    soon as the announced sizes pass the cap (a single frame, or fragments adding up), before any of
    the payload is kept; a message exactly at the cap is delivered."""
    cap = 1000
    at_cap = b"a" * cap
    assert ClientCodec(cap).feed(server(Opcode.TEXT, at_cap)) == [Text(at_cap)]
    assert client_violation(server(Opcode.TEXT, at_cap + b"a"), cap).code == 1009
    pieces = server(Opcode.TEXT, b"a" * 600, fin=False) + server(Opcode.CONTINUATION, b"a" * 401)
    assert client_violation(pieces, cap).code == 1009
    huge = ClientCodec(cap)
    (event,) = huge.feed(bytes((0x81, 127)) + struct.pack("!Q", 1 << 50))  # the head alone
    assert event == Violation(1009, "a message over 1000 bytes")


# --- what a server may send -----------------------------------------------------------------------


def test_server_frames_are_read_fragmented_or_whole():
    """Server text frames (one, or fragmented with control frames in between) come out as whole
    messages, the control frames first; binary messages are only counted.

    Covers: R2.2.1, R2.2.2
    """
    data = (
        server(Opcode.TEXT, b'{"a":', fin=False)
        + ServerCodec().ping(b"hb")
        + server(Opcode.CONTINUATION, b"1", fin=False)
        + ServerCodec().pong(b"late")
        + server(Opcode.CONTINUATION, b"}")
        + server(Opcode.BINARY, b"\x00" * 3)
        + ServerCodec().text(b"{}")
    )
    expected = [Ping(b"hb"), Pong(b"late"), Text(b'{"a":1}'), Binary(3), Text(b"{}")]
    assert ClientCodec().feed(data) == expected
    assert feed_bytewise(ClientCodec(), data) == expected  # no frame boundary is assumed


@pytest.mark.parametrize("code", [1000, 1001, 1011, 3000, 4999])
def test_a_server_close_ends_the_stream_with_its_code(code: int):
    codec = ClientCodec()
    after = server(Opcode.TEXT, b"{}")  # nothing is read past the close
    assert codec.feed(ServerCodec().close(code, "bye ✓") + after) == [Close(code, "bye ✓")]
    assert codec.done
    assert ClientCodec().feed(server(Opcode.CLOSE, b"")) == [Close(None, "")]


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 200_000])
def test_the_three_length_encodings_from_a_server(size: int):
    payload = b"z" * size
    frame = ServerCodec().text(payload)
    assert len(frame) == size + (2 if size < 126 else 4 if size < 65536 else 10)
    assert ClientCodec().feed(frame) == [Text(payload)]


@settings(max_examples=100, deadline=None)
@given(
    messages=st.lists(st.text(max_size=200), min_size=1, max_size=5),
    cut=st.integers(min_value=1, max_value=50),
    chunk=st.integers(min_value=1, max_value=150),
)
def test_server_to_client_round_trip(messages: list[str], cut: int, chunk: int):
    """Any text messages, each cut into fragments with a ping after each but the last, fed in
    chunks of any size, come back as the same messages with the pings in between."""
    stream = bytearray()
    expected: list = []
    for text in messages:
        data = text.encode()
        pieces = [data[i : i + cut] for i in range(0, len(data), cut)] or [b""]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            stream += server(Opcode.TEXT if i == 0 else Opcode.CONTINUATION, piece, fin=last)
            if not last:
                stream += server(Opcode.PING, str(i).encode())
                expected.append(Ping(str(i).encode()))
        expected.append(Text(data))
    codec = ClientCodec()
    events = []
    for i in range(0, len(stream), chunk):
        events += codec.feed(bytes(stream[i : i + chunk]))
    assert events == expected

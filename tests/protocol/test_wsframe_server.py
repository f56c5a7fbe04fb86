"""The sans-I/O WebSocket codec's server side (``shard.protocol.wsframe.ServerCodec``), without sockets:
masking, each rule a client can break and the close code it earns, fragmentation, the input cap
applied to whole messages while they stream in, and the three length encodings."""

from __future__ import annotations

import os
import struct

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.protocol.codec import parse_command
from shard.protocol.errors import ErrorCode, FrameError
from shard.protocol.framing import Oversized
from shard.protocol.wsframe import (
    Binary,
    Close,
    Opcode,
    Ping,
    Pong,
    ServerCodec,
    Text,
    Violation,
    encode_frame,
)

MASK = b"\x37\xfa\x21\x3d"


def client(opcode: int, payload: bytes, *, fin: bool = True, mask: bytes | None = MASK) -> bytes:
    """A frame as a client sends it: masked."""
    return encode_frame(opcode, payload, fin=fin, mask=mask)


def feed_bytewise(reader: ServerCodec, data: bytes) -> list:
    events = []
    for i in range(len(data)):
        events += reader.feed(data[i : i + 1])
    return events


def violation(data: bytes, max_message: int = 1 << 20) -> Violation:
    """The single event a stream that breaks a rule yields; byte by byte gives the same."""
    whole = ServerCodec(max_message).feed(data)
    assert len(whole) == 1, whole
    assert isinstance(whole[0], Violation), whole
    assert feed_bytewise(ServerCodec(max_message), data) == whole
    return whole[0]


# --- masking and the plain case -------------------------------------------------------------------


def test_a_masked_text_frame_is_one_text_message():
    """A masked text frame is unmasked into one message, whatever the chunking of the bytes."""
    payload = b'{"type":"agent.list","id":"x"}'
    frame = client(Opcode.TEXT, payload)
    assert frame[1] & 0x80, "the mask bit is set"
    assert payload not in frame, "the payload travels masked"
    assert ServerCodec().feed(frame) == [Text(payload)]
    assert feed_bytewise(ServerCodec(), frame) == [Text(payload)]


def test_an_unmasked_client_frame_is_a_1002_violation_and_ends_the_stream():
    """RFC 6455 §5.1: a server must fail the connection on an unmasked client frame, with 1002.
    The reader then ignores whatever follows, even valid frames."""
    reader = ServerCodec()
    events = reader.feed(client(Opcode.TEXT, b'{"type":"agent.list"}', mask=None))
    assert [type(e) for e in events] == [Violation]
    assert events[0].code == 1002
    assert "masked" in events[0].reason
    assert reader.done
    assert reader.feed(client(Opcode.TEXT, b"{}")) == []


def test_unmasked_control_frames_are_violations_too():
    for opcode in (Opcode.PING, Opcode.PONG, Opcode.CLOSE):
        assert violation(client(opcode, b"", mask=None)).code == 1002


# --- every rule a client can break ----------------------------------------------------------------


@pytest.mark.parametrize("bit", [0x40, 0x20, 0x10])
def test_a_reserved_bit_is_1002(bit):
    """No extension is ever negotiated, so RSV1-3 must be 0 (§5.2)."""
    frame = bytearray(client(Opcode.TEXT, b"{}"))
    frame[0] |= bit
    assert violation(bytes(frame)).code == 1002


@pytest.mark.parametrize("opcode", [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF])
def test_an_unknown_opcode_is_1002(opcode):
    assert violation(client(opcode, b"x")).code == 1002


def test_a_control_frame_over_125_bytes_is_1002():
    """Control payloads are at most 125 bytes (§5.5); 125 itself is fine."""
    assert ServerCodec().feed(client(Opcode.PING, b"p" * 125)) == [Ping(b"p" * 125)]
    for opcode in (Opcode.PING, Opcode.PONG, Opcode.CLOSE):
        assert violation(client(opcode, b"\x03\xe8" + b"p" * 124)).code == 1002


def test_a_fragmented_control_frame_is_1002():
    for opcode in (Opcode.PING, Opcode.PONG, Opcode.CLOSE):
        assert violation(client(opcode, b"", fin=False)).code == 1002


def test_a_continuation_without_a_started_message_is_1002():
    assert violation(client(Opcode.CONTINUATION, b"x")).code == 1002
    done = client(Opcode.TEXT, b"{}")  # a complete message leaves nothing to continue
    reader = ServerCodec()
    assert reader.feed(done) == [Text(b"{}")]
    assert [e.code for e in reader.feed(client(Opcode.CONTINUATION, b"x"))] == [1002]


@pytest.mark.parametrize("second", [Opcode.TEXT, Opcode.BINARY])
def test_a_new_data_frame_in_the_middle_of_a_message_is_1002(second):
    stream = client(Opcode.TEXT, b'{"a":', fin=False) + client(second, b"1}")
    assert violation(stream).code == 1002


def test_a_64_bit_length_with_its_top_bit_set_is_1002():
    head = bytes((0x81, 0x80 | 127)) + struct.pack("!Q", 1 << 63) + MASK
    assert violation(head).code == 1002


def test_lengths_not_in_their_minimal_encoding_are_1002():
    """§5.2: the minimal number of bytes must be used to encode the length."""
    short16 = bytes((0x81, 0x80 | 126)) + struct.pack("!H", 5) + MASK + b"x" * 5
    short64 = bytes((0x81, 0x80 | 127)) + struct.pack("!Q", 300) + MASK + b"x" * 300
    assert violation(short16).code == 1002
    assert violation(short64).code == 1002


def test_text_that_is_not_utf8_is_1007():
    """§8.1: a text message that is not valid UTF-8 fails the connection with 1007, also when the
    bad byte arrives in a later fragment.

    Covers: R2.3.1
    """
    assert violation(client(Opcode.TEXT, b'{"id":"\xff"}')).code == 1007
    stream = client(Opcode.TEXT, '{"id":"é'.encode(), fin=False) + client(Opcode.CONTINUATION, b'\xc3"}')
    assert violation(stream).code == 1007


def test_utf8_split_across_fragments_is_fine():
    """A multi-byte character cut between two fragments is one valid character."""
    text = '{"type":"agent.list","id":"é🚀漢"}'.encode()
    cut = text.index("🚀".encode()) + 2  # inside the 4-byte emoji
    stream = client(Opcode.TEXT, text[:cut], fin=False) + client(Opcode.CONTINUATION, text[cut:])
    assert ServerCodec().feed(stream) == [Text(text)]
    assert feed_bytewise(ServerCodec(), stream) == [Text(text)]


# --- close frames ---------------------------------------------------------------------------------


def test_close_frames_that_follow_the_rules():
    """An empty close has no status; a code with a UTF-8 reason is read as given; either ends the
    stream."""
    for payload, expected in [
        (b"", Close(None, "")),
        (struct.pack("!H", 1000), Close(1000, "")),
        (struct.pack("!H", 1001) + "au revoir ✓".encode(), Close(1001, "au revoir ✓")),
        (struct.pack("!H", 3000), Close(3000, "")),
        (struct.pack("!H", 4999), Close(4999, "")),
    ]:
        reader = ServerCodec()
        assert reader.feed(client(Opcode.CLOSE, payload) + client(Opcode.TEXT, b"{}")) == [expected]
        assert reader.done


def test_a_one_byte_close_payload_is_1002():
    assert violation(client(Opcode.CLOSE, b"\x03")).code == 1002


@pytest.mark.parametrize("code", [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535])
def test_a_close_code_that_may_not_be_sent_is_1002(code):
    assert violation(client(Opcode.CLOSE, struct.pack("!H", code))).code == 1002


def test_a_close_reason_that_is_not_utf8_is_1007():
    assert violation(client(Opcode.CLOSE, struct.pack("!H", 1000) + b"\xff")).code == 1007


# --- fragmentation and control frames in between ------------------------------------------------


def test_a_fragmented_message_with_pings_between_its_fragments():
    """Fragments make one message; control frames may come between them (§5.4) and are delivered
    at once, before the message they interrupt."""
    parts = [b'{"type":', b'"agent.list",', b'"id":"frag"}']
    stream = (
        client(Opcode.TEXT, parts[0], fin=False)
        + client(Opcode.PING, b"one")
        + client(Opcode.CONTINUATION, parts[1], fin=False)
        + client(Opcode.PONG, b"two")
        + client(Opcode.CONTINUATION, parts[2])
    )
    expected = [Ping(b"one"), Pong(b"two"), Text(b"".join(parts))]
    assert ServerCodec().feed(stream) == expected
    assert feed_bytewise(ServerCodec(), stream) == expected


def test_empty_frames_and_messages():
    stream = (
        client(Opcode.TEXT, b"", fin=False)
        + client(Opcode.CONTINUATION, b"{}", fin=False)
        + client(Opcode.CONTINUATION, b"")
        + client(Opcode.TEXT, b"")
        + client(Opcode.PING, b"")
    )
    assert ServerCodec().feed(stream) == [Text(b"{}"), Text(b""), Ping(b"")]


def test_binary_messages_are_counted_not_kept():
    """Binary frames are unused (PROTOCOL §2.2): only the size comes out, fragments summed."""
    stream = client(Opcode.BINARY, b"\x00" * 10, fin=False) + client(Opcode.CONTINUATION, b"\xff" * 5)
    assert ServerCodec().feed(stream) == [Binary(15)]


# --- the input cap --------------------------------------------------------------------------------


def test_a_message_at_the_cap_is_delivered_and_one_byte_more_is_oversized():
    cap = 1000
    at_cap = b'{"id":"' + b"a" * (cap - 9) + b'"}'
    assert len(at_cap) == cap
    assert ServerCodec(cap).feed(client(Opcode.TEXT, at_cap)) == [Text(at_cap)]
    over = at_cap[:-2] + b'a"}'
    (event,) = ServerCodec(cap).feed(client(Opcode.TEXT, over))
    assert event == Oversized(cap + 1, over)


def test_an_over_cap_message_in_many_small_frames_keeps_its_id_and_the_stream_goes_on():
    """A message passing the cap across many small fragments is dropped as it streams in: the
    reader never holds more than the cap of it, keeps the first 4 KB (so its id and type can be
    read, as for an over-cap JSONL line) and reads the next message normally."""
    cap = 8 * 1024
    message = orjson.dumps({"type": "prompt", "id": "too-big", "agent_id": "a-1", "message": "x" * 50_000})
    fragments = [message[i : i + 100] for i in range(0, len(message), 100)]
    stream = b"".join(
        client(Opcode.TEXT if i == 0 else Opcode.CONTINUATION, part, fin=i == len(fragments) - 1)
        for i, part in enumerate(fragments)
    )
    after = b'{"type":"agent.list","id":"next"}'
    reader = ServerCodec(cap)
    events = []
    held = []
    for i in range(0, len(stream), 4096):
        events += reader.feed(stream[i : i + 4096])
        if reader._message is not None and reader._message.data is not None:
            held.append(len(reader._message.data))
    events += reader.feed(client(Opcode.TEXT, after))
    assert max(held) <= cap
    assert len(events) == 2, events
    oversized, text = events
    assert isinstance(oversized, Oversized)
    assert oversized.size == len(message)
    assert oversized.prefix == message[:4096]
    assert text == Text(after)
    with pytest.raises(FrameError) as refused:
        parse_command(oversized, orchestrator=True)  # what the daemon does with the record
    assert (refused.value.code, refused.value.id, refused.value.command) == (
        ErrorCode.INVALID_REQUEST,
        "too-big",
        "prompt",
    )


def test_a_frame_announcing_more_than_the_cap_is_never_buffered():
    """A frame whose 64-bit length announces a petabyte turns the message oversized at its head;
    its payload is dropped as it comes, and the connection's next message still parses once the
    announced bytes have passed (here a small announced size, to get there)."""
    reader = ServerCodec(1024)
    huge = bytes((0x81, 0x80 | 127)) + struct.pack("!Q", 1 << 50) + MASK
    assert reader.feed(huge + b'{"id":"p"' + b"\x00" * 100_000) == []
    assert reader._message is not None
    assert reader._message.data is None
    assert len(reader._message.prefix) <= 4096
    reader = ServerCodec(1024)
    payload = b'{"id":"q","type":"prompt","pad":"' + b"z" * 5000 + b'"}'
    events = reader.feed(client(Opcode.TEXT, payload) + client(Opcode.TEXT, b"{}"))
    assert events == [Oversized(len(payload), payload[:4096]), Text(b"{}")]


# --- lengths and server frames ---------------------------------------------------------------------


@pytest.mark.parametrize(("size", "head"), [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10), (70000, 10)])
def test_7_16_and_64_bit_lengths(size, head):
    """Server frames use the 7-bit length up to 125, 16-bit up to 65535, then 64-bit, unmasked;
    a client frame of each size (4 more bytes: its mask) reads back intact."""
    payload = os.urandom(size // 2).hex().encode() + (b"a" if size % 2 else b"")
    assert len(payload) == size
    frame = ServerCodec().text(payload)
    assert len(frame) == head + size
    assert frame[0] == 0x81
    assert not frame[1] & 0x80, "server frames are unmasked"
    assert frame[head:] == payload
    masked = client(Opcode.TEXT, payload)
    assert len(masked) == head + 4 + size
    assert ServerCodec().feed(masked) == [Text(payload)]


def test_server_control_frames():
    assert ServerCodec().ping(b"hb") == b"\x89\x02hb"
    assert ServerCodec().pong(b"hb") == b"\x8a\x02hb"
    assert ServerCodec().close(1002, "bad") == b"\x88\x05\x03\xeabad"
    long = ServerCodec().close(1008, "é" * 200)  # cut to 125 bytes without splitting a character
    assert len(long) == 2 + 124
    assert long[4:].decode("utf-8") == "é" * 61
    assert ServerCodec().feed(client(Opcode.CLOSE, long[2:])) == [Close(1008, "é" * 61)]


# --- round trip -----------------------------------------------------------------------------------

_messages = st.lists(st.text(max_size=300), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    messages=_messages,
    cuts=st.lists(st.integers(min_value=1, max_value=97), min_size=1, max_size=8),
    chunk=st.integers(min_value=1, max_value=200),
    masks=st.lists(st.binary(min_size=4, max_size=4), min_size=1, max_size=4),
    pings=st.booleans(),
)
def test_round_trip(messages, cuts, chunk, masks, pings):
    """Any text messages, cut into fragments of any sizes, masked with any keys, with pings between
    fragments and the byte stream fed in chunks of any size, come back as the same messages."""
    stream = bytearray()
    expected: list = []
    n = 0
    for text in messages:
        data = text.encode("utf-8")
        pieces, at = [], 0
        while at < len(data) or not pieces:
            size = cuts[len(pieces) % len(cuts)]
            pieces.append(data[at : at + size])
            at += size
        for i, piece in enumerate(pieces):
            opcode = Opcode.TEXT if i == 0 else Opcode.CONTINUATION
            stream += client(opcode, piece, fin=i == len(pieces) - 1, mask=masks[n % len(masks)])
            n += 1
            if pings and i < len(pieces) - 1:
                stream += client(Opcode.PING, str(n).encode(), mask=masks[n % len(masks)])
                expected.append(Ping(str(n).encode()))
        expected.append(Text(data))
    reader = ServerCodec()
    events = []
    for i in range(0, len(stream), chunk):
        events += reader.feed(bytes(stream[i : i + chunk]))
    assert events == expected

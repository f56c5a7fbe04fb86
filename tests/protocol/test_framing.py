"""JSONL framing (PROTOCOL §2.1, §2.3): LineBuffer, peek_envelope, encode_line."""

from __future__ import annotations

import itertools
import tracemalloc

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.protocol.codec import parse_command
from shard.protocol.commands import Prompt
from shard.protocol.framing import (
    LineBuffer,
    Oversized,
    encode_line,
    peek_envelope,
)

LS = "\u2028"  # LINE SEPARATOR
PS = "\u2029"  # PARAGRAPH SEPARATOR
PREFIX_MAX = 4096


# --- helpers ------------------------------------------------------------------------------------


def feed_all(buf: LineBuffer, chunks) -> list:
    out = []
    for chunk in chunks:
        out.extend(buf.feed(chunk))
    out.extend(buf.close())
    return out


def split_at(data: bytes, points) -> list[bytes]:
    cuts = sorted({p for p in points if 0 < p < len(data)})
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def reference_records(data: bytes, cap: int | None = None) -> list:
    """What PROTOCOL §2.1 says a reader yields: LF-separated lines, one trailing CR stripped.

    With ``cap``, a line longer than the cap is one Oversized(size, first 4096 bytes). Only used with
    inputs whose lines do not end in CR, where the size is unambiguous.
    """
    parts = data.split(b"\n")
    tail = parts.pop()
    lines = parts + ([tail] if tail else [])
    out = []
    for line in lines:
        stripped = line[:-1] if line.endswith(b"\r") else line
        if cap is not None and len(stripped) > cap:
            out.append(Oversized(len(stripped), stripped[:PREFIX_MAX]))
        else:
            out.append(stripped)
    return out


def normalized(records: list) -> list:
    """Records with each Oversized reduced to its size: the prefix length depends on how much had
    arrived when the cap was crossed, which is allowed to vary."""
    return [("oversized", r.size) if isinstance(r, Oversized) else r for r in records]


def assert_prefixes_valid(records: list, reference: list) -> None:
    for got, want in zip(records, reference, strict=True):
        if isinstance(got, Oversized):
            assert isinstance(want, Oversized)
            assert len(got.prefix) <= PREFIX_MAX
            assert want.prefix.startswith(got.prefix) or got.prefix.startswith(want.prefix)


# Byte tokens that stress the splitter: LF, CR, CRLF, the UTF-8 of U+2028/U+2029/U+0085, JSON punctuation.
TOKENS = [
    b"\n",
    b"\r",
    b"\r\n",
    b"\r\r\n",
    LS.encode(),
    PS.encode(),
    "\u0085".encode(),
    b"\x0b",
    b"\x0c",
    b"a",
    b"bcd",
    b'{"id":"x"}',
    b"\\n",
    "é✓".encode(),
]
stream_bytes = st.lists(st.sampled_from(TOKENS), max_size=40).map(b"".join) | st.binary(max_size=200)
stream_bytes_no_cr = st.lists(st.sampled_from([t for t in TOKENS if b"\r" not in t]), max_size=40).map(
    b"".join
)


# --- LineBuffer: splitting --------------------------------------------------------------------


def test_splits_on_lf_only():
    """Covers: R2.1.2"""
    buf = LineBuffer()
    data = b"one\x0btwo\x0cthree\rfour\x85five\n" + "six\u0085seven".encode() + b"\nlast\n"
    assert feed_all(buf, [data]) == [b"one\x0btwo\x0cthree\rfour\x85five", "six\u0085seven".encode(), b"last"]


def test_unicode_line_and_paragraph_separators_never_split_a_record():
    """Covers: R2.1.3, R2.3.1"""
    msg = f"before{LS}middle{PS}after{LS}"
    line = b'{"type":"prompt","message":"' + msg.encode("utf-8") + b'"}\n'
    assert LS.encode("utf-8") in line  # raw bytes, not an escape
    records = feed_all(LineBuffer(), [line + line])
    assert len(records) == 2
    for record in records:
        command = parse_command(record)
        assert isinstance(command, Prompt)
        assert command.message == msg


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\r\n", [b"a"]),
        (b"a\r\r\n", [b"a\r"]),
        (b"a\r\r\r\n", [b"a\r\r"]),
        (b"\r\n", [b""]),
        (b"a\rb\r\n", [b"a\rb"]),
        (b"a\n\r\n", [b"a", b""]),
        (b"a\r", [b"a"]),  # unterminated final line, returned by close()
    ],
)
def test_strips_exactly_one_trailing_cr(data, expected):
    """Covers: R2.1.4"""
    assert feed_all(LineBuffer(), [data]) == expected


def test_crlf_and_lf_lines_give_the_same_records():
    """Covers: R2.1.2, R2.1.4"""
    lines = [b'{"type":"abort"}', b'{"type":"prompt","message":"x"}', b""]
    lf = b"".join(line + b"\n" for line in lines)
    crlf = b"".join(line + b"\r\n" for line in lines)
    assert feed_all(LineBuffer(), [lf]) == feed_all(LineBuffer(), [crlf]) == lines


def test_close_returns_final_unterminated_line_and_resets():
    """Covers: R2.1.2"""
    buf = LineBuffer()
    assert buf.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert buf.feed(b":2}") == []
    assert buf.close() == [b'{"b":2}']
    assert buf.close() == []
    assert buf.feed(b"next\n") == [b"next"]


def test_empty_input_yields_nothing():
    """Covers: R2.1.2"""
    buf = LineBuffer()
    assert buf.feed(b"") == []
    assert buf.close() == []


@given(data=stream_bytes, points=st.lists(st.integers(min_value=0, max_value=400), max_size=30))
def test_any_chunking_matches_reference_split(data, points):
    """Covers: R2.1.2, R2.1.3, R2.1.4"""
    expected = reference_records(data)
    assert feed_all(LineBuffer(), [data]) == expected
    assert feed_all(LineBuffer(), split_at(data, points)) == expected


@given(data=stream_bytes)
def test_byte_by_byte_equals_one_chunk(data):
    """Covers: R2.1.2, R2.1.3, R2.1.4"""
    one = feed_all(LineBuffer(), [data])
    bytewise = feed_all(LineBuffer(), [data[i : i + 1] for i in range(len(data))])
    assert bytewise == one == reference_records(data)


# --- LineBuffer: the input cap ----------------------------------------------------------------


def test_multi_megabyte_message_is_delivered_intact():
    """Covers: R2.3.2, R2.1.1"""
    big = "x" * (5 * 1024 * 1024) + LS + "é"
    line = encode_line(Prompt(message=big, id="r1").to_json())
    chunks = [line[i : i + 65536] for i in range(0, len(line), 65536)]
    records = feed_all(LineBuffer(), chunks)
    assert len(records) == 1
    command = parse_command(records[0])
    assert isinstance(command, Prompt)
    assert command.message == big


def test_line_at_cap_passes_line_over_cap_is_oversized():
    """Covers: R2.1.2"""
    cap = 16
    at_cap = b"a" * cap
    over = b"b" * (cap + 1)
    records = feed_all(LineBuffer(cap), [at_cap + b"\n" + over + b"\n" + b"ok\n"])
    assert records == [at_cap, Oversized(cap + 1, over), b"ok"]


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 5000, 1 << 20])
def test_oversized_line_yields_one_record_with_size_and_short_prefix(chunk_size):
    """Covers: R2.1.2"""
    cap = 64
    long_line = b'{"id":"req-1","type":"prompt","message":"' + b"z" * 20000 + b'"}'
    data = b"first\n" + long_line + b"\n" + b'{"type":"abort"}\n' + b"tail"
    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    records = feed_all(LineBuffer(cap), chunks)
    assert len(records) == 4
    assert records[0] == b"first"
    oversized = records[1]
    assert isinstance(oversized, Oversized)
    assert oversized.size == len(long_line)
    assert len(oversized.prefix) <= PREFIX_MAX
    assert long_line.startswith(oversized.prefix)
    assert len(oversized.prefix) >= cap  # enough to read the envelope
    assert records[2:] == [b'{"type":"abort"}', b"tail"]


def test_unterminated_oversized_line_is_reported_on_close():
    """Covers: R2.1.2"""
    buf = LineBuffer(10)
    assert buf.feed(b"x" * 25) == []
    assert buf.feed(b"y" * 5) == []
    [record] = buf.close()
    assert record == Oversized(30, b"x" * 25)


@pytest.mark.parametrize("chunk_size", [1, 3, 64])
def test_crlf_line_of_exactly_cap_bytes_is_accepted_whatever_the_chunking(chunk_size):
    """The cap applies to the line's content; how the bytes arrive must not change the record.

    Covers: R2.1.2, R2.1.4
    """
    cap = 8
    data = b"12345678\r\n" + b"next\n"
    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    assert feed_all(LineBuffer(cap), [data]) == [b"12345678", b"next"]
    assert feed_all(LineBuffer(cap), chunks) == [b"12345678", b"next"]


@settings(max_examples=300)
@given(data=stream_bytes, cap=st.integers(min_value=1, max_value=12), st_data=st.data())
def test_chunking_never_changes_records_under_a_small_cap(data, cap, st_data):
    """Covers: R2.1.2, R2.1.3, R2.1.4"""
    points = st_data.draw(st.lists(st.integers(min_value=0, max_value=max(len(data), 1)), max_size=20))
    one = normalized(feed_all(LineBuffer(cap), [data]))
    assert normalized(feed_all(LineBuffer(cap), split_at(data, points))) == one
    assert normalized(feed_all(LineBuffer(cap), [data[i : i + 1] for i in range(len(data))])) == one


@settings(max_examples=300)
@given(data=stream_bytes_no_cr, cap=st.integers(min_value=1, max_value=12), st_data=st.data())
def test_small_cap_matches_reference_with_oversized(data, cap, st_data):
    """Covers: R2.1.2, R2.1.3"""
    points = st_data.draw(st.lists(st.integers(min_value=0, max_value=max(len(data), 1)), max_size=20))
    expected = reference_records(data, cap)
    got = feed_all(LineBuffer(cap), split_at(data, points))
    assert normalized(got) == normalized(expected)
    assert_prefixes_valid(got, expected)


def test_oversized_line_is_never_held_in_memory():
    """16 MiB of one line through a 256 KiB cap: memory stays near the cap, not the line size.

    Covers: R2.1.2
    """
    cap = 256 * 1024
    chunk = b"q" * (64 * 1024)
    total_chunks = 256  # 16 MiB
    buf = LineBuffer(cap)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for _ in range(total_chunks):
            assert buf.feed(chunk) == []
        records = buf.feed(b"\nafter\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert records == [Oversized(len(chunk) * total_chunks, chunk[:PREFIX_MAX]), b"after"]
    assert peak < 4 * cap


# --- peek_envelope ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (b'{"id":"r1","type":"prompt"}', ("r1", "prompt")),
        (b'{"type":"prompt","id":"r1"}', ("r1", "prompt")),
        (b' \r\n{ "id" : "r1" ,\t"type" : "abort" }', ("r1", "abort")),
        (b'{"args":{"id":"x","type":"nested"},"id":"y"}', ("y", None)),
        (b'{"list":[{"id":"x"},["id","x"]],"type":"t"}', (None, "t")),
        (b'{"x":"id","y":"type","id":"real"}', ("real", None)),
        (b'{"id":5,"type":"prompt"}', (None, "prompt")),
        (b'{"id":null,"type":true}', (None, None)),
        (b'{"id":{"a":"b"},"type":["prompt"]}', (None, None)),
        (b'{"s":"a \\" } ] { [ \\\\","id":"r"}', ("r", None)),
        (b'{"id":"a\\"b\\\\c\\/d\\n\\t"}', ('a"b\\c/d\n\t', None)),
        (b'{"id":"\\u00e9\\u2028x"}', ("\u00e9\u2028x", None)),
        ('{"id":"é✓"}'.encode(), ("é✓", None)),
        (b'{"type":"prompt","message":"trunc', (None, "prompt")),
        (b'{"type":"prompt","id":"tru', (None, "prompt")),
        (b'{"id":"r1","type":"pro', ("r1", None)),
        (b'{"id":"bad\\q"}', (None, None)),
        (b'{"id":"bad\\u12', (None, None)),
        (b'{"id":"bad\\uZZZZ"}', (None, None)),
        (b'["id","x"]', (None, None)),
        (b"", (None, None)),
        (b"not json", (None, None)),
        (b'{"id":"a"}{"id":"b","type":"t"}', ("a", None)),
    ],
)
def test_peek_envelope(prefix, expected):
    """Covers: R5.1.2"""
    assert peek_envelope(prefix) == expected


def test_peek_envelope_never_returns_a_broken_surrogate_pair():
    """An id escaped as a UTF-16 surrogate pair (what Python's json.dumps emits) must come back as the
    real character or not at all: lone surrogates cannot be encoded into the error response.

    Covers: R5.1.2, R2.3.1
    """
    prefix = orjson.dumps({"id": "run-😀", "type": "prompt"}).replace("😀".encode(), b"\\ud83d\\ude00")
    msg_id, msg_type = peek_envelope(prefix)
    assert msg_type == "prompt"
    assert msg_id in ("run-😀", None)


def test_peek_envelope_reads_a_truncated_oversized_prefix():
    """Covers: R5.1.2"""
    line = b'{"id":"req-9","type":"prompt","message":"' + b"m" * 10000 + b'"}'
    [record] = feed_all(LineBuffer(100), [line + b"\n"])
    assert isinstance(record, Oversized)
    assert peek_envelope(record.prefix) == ("req-9", "prompt")


# --- encode_line --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)
nasty_text = st.text() | st.lists(
    st.sampled_from(["\n", "\r", "\r\n", LS, PS, "\u0085", '"', "\\", "\x00", "é", "😀", "a"]), max_size=20
).map("".join)


@given(message=nasty_text, extra=json_values)
def test_encode_line_has_exactly_one_lf_at_the_end(message, extra):
    """Covers: R2.1.1, R2.1.3, R2.3.1"""
    command = Prompt.model_validate({"type": "prompt", "message": message, "x_extra": extra})
    line = encode_line(command.to_json())
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert line[:-1] == command.to_json()  # the document itself, then LF: no CR, no padding
    line.decode("utf-8")  # valid UTF-8
    records = feed_all(LineBuffer(), [line])
    assert len(records) == 1
    parsed = parse_command(records[0])
    assert isinstance(parsed, Prompt)
    assert parsed.message == message
    assert parsed.to_wire() == command.to_wire()


@given(messages=st.lists(nasty_text, min_size=1, max_size=5), points=st.lists(st.integers(0, 2000)))
def test_encoded_stream_reframes_to_the_same_messages(messages, points):
    """Covers: R2.1.1, R2.1.2, R2.1.3"""
    stream = b"".join(encode_line(Prompt(message=m).to_json()) for m in messages)
    records = feed_all(LineBuffer(), split_at(stream, points))
    assert [parse_command(r).message for r in records] == messages


def test_encode_line_writes_non_ascii_as_utf8():
    """Covers: R2.3.1"""
    line = encode_line(Prompt(message="héllo ✓ 😀").to_json())
    assert "héllo ✓ 😀".encode() in line
    assert orjson.loads(line) == {"type": "prompt", "message": "héllo ✓ 😀"}

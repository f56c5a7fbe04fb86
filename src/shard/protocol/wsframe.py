"""RFC 6455 framing for both ends of a WebSocket (PROTOCOL §2.2), sans-I/O: bytes in, events out;
frames out as bytes. The handshakes live with their I/O (``shard.daemon.websocket``,
``shard.client.websocket``); this module never touches a socket.

:class:`ServerCodec` is the daemon's side: every client frame must be masked (§5.1) and its own
frames go unmasked. :class:`ClientCodec` is the SDK's side: a masked server frame is refused (§5.1)
and every frame it sends is masked with a fresh random key. Both read by the same rules (§5): no RSV
bit is set (no extension is ever negotiated, §5.2), the opcode is known, control frames carry at most
125 bytes and are not fragmented (§5.5), continuation frames continue a started message and nothing
else starts a new one mid-message (§5.4) while control frames may come between its fragments,
lengths use their minimal 7-, 16- or 64-bit encoding and the 64-bit one has its top bit clear
(§5.2), text is UTF-8 (§8.1), and a close frame's payload holds no single byte, a sendable status
code and a UTF-8 reason (§5.5.1, §7.4). A broken rule is a :class:`Violation` naming the close code
to fail the connection with (1002, 1007 for bad UTF-8, 1009 for a message over the cap on the client
side); after it, or after a :class:`Close`, the codec takes no more input.

The cap (``max_message``) applies to a whole message, not a frame, and no message is ever held
beyond it whatever the frame lengths announce. What becomes of an over-cap text message is the
side's choice: the daemon answers it and keeps the connection (DESIGN §6), so :class:`ServerCodec`
drops it as it streams in, keeps its first 4 KB, and gives the same
:class:`~shard.protocol.framing.Oversized` record the JSONL framer gives for an over-cap line; a
client has nobody to answer, so :class:`ClientCodec` fails the connection with 1009. Binary messages
are unused (PROTOCOL §2.2): their payload is never kept, only counted.
"""

from __future__ import annotations

import codecs
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES, Oversized

PREFIX_KEEP = 4096  # what an over-cap message keeps, as the JSONL framer does
MAX_CONTROL_PAYLOAD = 125

NORMAL = 1000
GOING_AWAY = 1001
PROTOCOL_ERROR = 1002
INVALID_DATA = 1007
MESSAGE_TOO_BIG = 1009

_LEN16 = struct.Struct("!H")
_LEN64 = struct.Struct("!Q")
_CODE = struct.Struct("!H")
_HEAD16 = struct.Struct("!BBH")
_HEAD64 = struct.Struct("!BBQ")


class Opcode(IntEnum):
    CONTINUATION = 0x0
    TEXT = 0x1
    BINARY = 0x2
    CLOSE = 0x8
    PING = 0x9
    PONG = 0xA


_DATA = (Opcode.TEXT, Opcode.BINARY)
_KNOWN = frozenset(int(op) for op in Opcode)


@dataclass(frozen=True, slots=True)
class Text:
    """A complete text message (valid UTF-8), as bytes."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Binary:
    """A complete binary message; only its size is kept."""

    size: int


@dataclass(frozen=True, slots=True)
class Ping:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Pong:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """The peer's close frame; ``code`` is None when it carried no status (1005, §7.1.5)."""

    code: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Violation:
    """The peer broke the protocol: fail the connection with close ``code`` (§7.1.7)."""

    code: int
    reason: str


Event = Text | Binary | Ping | Pong | Close | Violation | Oversized


def valid_close_code(code: int) -> bool:
    """A status code an endpoint may put in a close frame (§7.4.1, IANA registry; 1004-1006 and
    1015 are reserved for reporting, never sent)."""
    return code in (1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014) or (
        3000 <= code <= 4999
    )


def _unmask(data: bytes | memoryview, mask: bytes | None, offset: int) -> bytes:
    """XOR ``data`` with the 4-byte ``mask`` starting ``offset`` bytes into the frame's payload
    (masking and unmasking are the same XOR; no mask: the bytes as they are).

    One big-int XOR runs in C: about as fast as a dedicated extension for the sizes seen here."""
    size = len(data)
    if not size:
        return b""
    if mask is None:
        return bytes(data)
    shift = offset % 4
    key = (mask[shift:] + mask[:shift]) * (size // 4 + 1)
    value = int.from_bytes(data, "big") ^ int.from_bytes(key[:size], "big")
    return value.to_bytes(size, "big")


def encode_frame(opcode: int, payload: bytes, *, fin: bool = True, mask: bytes | None = None) -> bytes:
    """One frame: a 2-14 byte head and the payload, masked with the 4-byte ``mask`` if given (a
    client's frame) and unmasked otherwise (a server's)."""
    b0 = (0x80 if fin else 0) | opcode
    size = len(payload)
    mask_bit = 0x80 if mask is not None else 0
    if size < 126:
        head = bytes((b0, mask_bit | size))
    elif size < 65536:
        head = _HEAD16.pack(b0, mask_bit | 126, size)
    else:
        head = _HEAD64.pack(b0, mask_bit | 127, size)
    if mask is None:
        return head + payload
    return head + mask + _unmask(payload, mask, 0)


def close_payload(code: int, reason: str = "") -> bytes:
    """A close frame's payload; the reason is cut to fit 125 bytes without splitting a character."""
    raw = reason.encode("utf-8")[: MAX_CONTROL_PAYLOAD - 2].decode("utf-8", errors="ignore")
    return _CODE.pack(code) + raw.encode("utf-8")


class _Frame:
    __slots__ = ("fin", "mask", "offset", "opcode", "remaining")

    def __init__(self, fin: bool, opcode: int, mask: bytes | None, length: int) -> None:
        self.fin = fin
        self.opcode = opcode
        self.mask = mask
        self.remaining = length
        self.offset = 0


class _Message:
    """A data message in progress: its bytes while under the cap, else only its size and prefix."""

    __slots__ = ("data", "opcode", "prefix", "size", "utf8")

    def __init__(self, opcode: int) -> None:
        self.opcode = opcode
        self.size = 0
        self.data: bytearray | None = bytearray() if opcode == Opcode.TEXT else None
        self.prefix: bytearray | None = None  # set once the message is over the cap
        self.utf8 = codecs.getincrementaldecoder("utf-8")() if opcode == Opcode.TEXT else None


class _Codec:
    """What both sides share: the reader, and frames out through :meth:`_frame`."""

    peer_masks: bool  # whether every frame the peer sends must be masked (else: must not be)
    keep_oversized: bool  # an over-cap text message is an Oversized record (else a 1009 Violation)

    def __init__(self, max_message: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_message < 1:
            raise ValueError("max_message must be positive")
        self.max_message = max_message
        self.done = False  # a Close or a Violation was returned: no more events
        self._head = bytearray()
        self._frame: _Frame | None = None
        self._control = bytearray()
        self._message: _Message | None = None

    # --- frames out -----------------------------------------------------------------------------------

    def _frame_out(self, opcode: int, payload: bytes) -> bytes:
        raise NotImplementedError

    def text(self, data: bytes) -> bytes:
        """One complete text message, ``data`` already UTF-8."""
        return self._frame_out(Opcode.TEXT, data)

    def ping(self, payload: bytes = b"") -> bytes:
        return self._frame_out(Opcode.PING, payload[:MAX_CONTROL_PAYLOAD])

    def pong(self, payload: bytes) -> bytes:
        return self._frame_out(Opcode.PONG, payload[:MAX_CONTROL_PAYLOAD])

    def close(self, code: int = NORMAL, reason: str = "") -> bytes:
        return self._frame_out(Opcode.CLOSE, close_payload(code, reason))

    # --- frames in ------------------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[Event]:
        """Add ``data``; return every event it completed, in order."""
        out: list[Event] = []
        view = memoryview(data)
        while not self.done:
            if self._frame is None:
                view = self._read_head(view, out)
                if self._frame is None:
                    break
            frame = self._frame
            take = min(frame.remaining, len(view))
            if take:
                self._payload(frame, view[:take])
                view = view[take:]
                frame.offset += take
                frame.remaining -= take
            if frame.remaining:
                break
            self._frame = None
            self._end_frame(frame, out)
        return out

    def _read_head(self, view: memoryview, out: list[Event]) -> memoryview:
        head = self._head
        if len(head) < 2:
            take = min(2 - len(head), len(view))
            head += view[:take]
            view = view[take:]
            if len(head) < 2:
                return view
            problem = self._check_head()  # fail on the first two bytes, before any length is read
            if problem is not None:
                self._fail(out, PROTOCOL_ERROR, problem)
                return view
        need = self._head_size()
        take = min(need - len(head), len(view))
        head += view[:take]
        view = view[take:]
        if len(head) == need:
            self._start_frame(out)
        return view

    def _head_size(self) -> int:
        code = self._head[1] & 0x7F
        extra = 2 if code == 126 else 8 if code == 127 else 0
        return 2 + extra + (4 if self._head[1] & 0x80 else 0)

    def _check_head(self) -> str | None:
        b0, b1 = self._head[0], self._head[1]
        opcode, fin, code = b0 & 0x0F, bool(b0 & 0x80), b1 & 0x7F
        if b0 & 0x70:
            return "a reserved bit is set and no extension was negotiated"
        if opcode not in _KNOWN:
            return f"unknown opcode {opcode:#x}"
        if self.peer_masks and not b1 & 0x80:
            return "client frames must be masked (RFC 6455 section 5.1)"
        if not self.peer_masks and b1 & 0x80:
            return "server frames must not be masked (RFC 6455 section 5.1)"
        if opcode >= Opcode.CLOSE:
            if not fin:
                return "a control frame must not be fragmented"
            if code > MAX_CONTROL_PAYLOAD:
                return "a control frame carries at most 125 bytes"
        elif opcode == Opcode.CONTINUATION and self._message is None:
            return "a continuation frame with no message to continue"
        elif opcode != Opcode.CONTINUATION and self._message is not None:
            return "a new data frame before the fragmented message ended"
        return None

    def _start_frame(self, out: list[Event]) -> None:
        head = self._head
        b0, code = head[0], head[1] & 0x7F
        if code == 126:
            length = _LEN16.unpack_from(head, 2)[0]
            if length < 126:
                return self._fail(out, PROTOCOL_ERROR, "a frame length not in its minimal encoding")
        elif code == 127:
            length = _LEN64.unpack_from(head, 2)[0]
            if length >> 63:
                return self._fail(out, PROTOCOL_ERROR, "the 64-bit frame length has its top bit set")
            if length < 65536:
                return self._fail(out, PROTOCOL_ERROR, "a frame length not in its minimal encoding")
        else:
            length = code
        opcode = b0 & 0x0F
        mask = bytes(head[-4:]) if head[1] & 0x80 else None
        frame = _Frame(bool(b0 & 0x80), opcode, mask, length)
        self._head.clear()
        if opcode in _DATA:
            self._message = _Message(opcode)
        if self._message is not None and opcode < Opcode.CLOSE:
            self._grow(self._message, length)
            if self._message.prefix is not None and not self.keep_oversized:
                return self._fail(out, MESSAGE_TOO_BIG, f"a message over {self.max_message} bytes")
        self._frame = frame
        return None

    def _grow(self, message: _Message, length: int) -> None:
        """Count a data frame into its message; the message turns oversized as soon as the frame
        would carry it past the cap, so nothing past the cap is ever stored."""
        message.size += length
        if message.opcode != Opcode.TEXT or message.prefix is not None:
            return
        if message.size > self.max_message:
            assert message.data is not None
            message.prefix = message.data[:PREFIX_KEEP]
            message.data = None
            message.utf8 = None

    def _payload(self, frame: _Frame, chunk: memoryview) -> None:
        if frame.opcode >= Opcode.CLOSE:
            self._control += _unmask(chunk, frame.mask, frame.offset)
            return
        message = self._message
        assert message is not None
        if message.data is not None:
            message.data += _unmask(chunk, frame.mask, frame.offset)
        elif message.prefix is not None and len(message.prefix) < PREFIX_KEEP:
            room = PREFIX_KEEP - len(message.prefix)
            message.prefix += _unmask(chunk[:room], frame.mask, frame.offset)
        # otherwise the bytes are dropped: binary payloads and what passes an over-cap prefix

    def _end_frame(self, frame: _Frame, out: list[Event]) -> None:
        if frame.opcode >= Opcode.CLOSE:
            payload = bytes(self._control)
            self._control.clear()
            self._end_control(frame.opcode, payload, out)
            return
        message = self._message
        assert message is not None
        if message.utf8 is not None and message.data is not None:
            # checked frame by frame, so a message that cannot be UTF-8 fails as early as it can;
            # a character split across frames is fine (the decoder carries it over)
            start = len(message.data) - frame.offset
            try:
                message.utf8.decode(bytes(message.data[start:]), final=frame.fin)
            except UnicodeDecodeError:
                return self._fail(out, INVALID_DATA, "a text message is not valid UTF-8")
        if not frame.fin:
            return None
        self._message = None
        if message.opcode == Opcode.BINARY:
            out.append(Binary(message.size))
        elif message.data is None:
            assert message.prefix is not None
            out.append(Oversized(message.size, bytes(message.prefix)))
        else:
            out.append(Text(bytes(message.data)))
        return None

    def _end_control(self, opcode: int, payload: bytes, out: list[Event]) -> None:
        if opcode == Opcode.PING:
            out.append(Ping(payload))
        elif opcode == Opcode.PONG:
            out.append(Pong(payload))
        elif not payload:
            out.append(Close(None, ""))
            self.done = True
        elif len(payload) == 1:
            self._fail(out, PROTOCOL_ERROR, "a close frame with a one-byte payload")
        else:
            code = _CODE.unpack_from(payload)[0]
            if not valid_close_code(code):
                return self._fail(out, PROTOCOL_ERROR, f"close code {code} may not be sent")
            try:
                reason = payload[2:].decode("utf-8")
            except UnicodeDecodeError:
                return self._fail(out, INVALID_DATA, "a close reason is not valid UTF-8")
            out.append(Close(code, reason))
            self.done = True
        return None

    def _fail(self, out: list[Event], code: int, reason: str) -> None:
        out.append(Violation(code, reason))
        self.done = True
        self._head.clear()
        self._control.clear()
        self._frame = None
        self._message = None


class ServerCodec(_Codec):
    """The daemon's end: client frames must be masked; its own go unmasked; an over-cap text
    message comes out as an :class:`Oversized` record, to be answered (DESIGN §6)."""

    peer_masks = True
    keep_oversized = True

    def _frame_out(self, opcode: int, payload: bytes) -> bytes:
        return encode_frame(opcode, payload)


class ClientCodec(_Codec):
    """A client's end: server frames must not be masked; its own are masked, each with a fresh
    key from ``new_mask`` (random unless a test pins it); an over-cap message fails with 1009."""

    peer_masks = False
    keep_oversized = False

    def __init__(
        self, max_message: int = DEFAULT_MAX_LINE_BYTES, *, new_mask: Callable[[], bytes] | None = None
    ) -> None:
        super().__init__(max_message)
        self._new_mask = new_mask or _random_mask

    def _frame_out(self, opcode: int, payload: bytes) -> bytes:
        return encode_frame(opcode, payload, mask=self._new_mask())


def _random_mask() -> bytes:
    return os.urandom(4)

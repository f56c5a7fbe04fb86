"""The client side of RFC 6455 framing, sans-I/O: bytes in, events out; frames out as bytes.

A client masks every frame it sends (§5.1, with fresh random keys) and reads unmasked server frames.
:class:`ClientFrames` reassembles fragmented messages (§5.4), answers nothing by itself — the caller
sends :func:`pong` for each :class:`Ping` it gets (R2.2.4) — and reports a protocol violation as a
:class:`Closed` with code 1002. Binary messages are unused by Shard (R2.2.2): they are counted and
dropped. The handshake lives in :mod:`shard.client.websocket`.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0
PROTOCOL_ERROR = 1002
_CONTROL = (CLOSE, PING, PONG)


@dataclass(frozen=True, slots=True)
class Text:
    data: bytes


@dataclass(frozen=True, slots=True)
class Ping:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Closed:
    code: int | None
    reason: str


Event = Text | Ping | Closed


def _mask(payload: bytes, key: bytes) -> bytes:
    if not payload:
        return payload
    n = len(payload)
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


def encode(opcode: int, payload: bytes, *, key: bytes | None = None) -> bytes:
    """One final, masked client frame."""
    key = key if key is not None else os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + key + _mask(payload, key)


def text(data: bytes) -> bytes:
    return encode(TEXT, data)


def pong(payload: bytes) -> bytes:
    return encode(PONG, payload)


def close(code: int = 1000, reason: str = "") -> bytes:
    return encode(CLOSE, struct.pack("!H", code) + reason.encode()[:120])


class ClientFrames:
    """Feed what the server sent; take complete events out."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._message: bytearray | None = None
        self._message_op = 0
        self.binary_dropped = 0
        self.closed = False

    def feed(self, data: bytes) -> list[Event]:
        out: list[Event] = []
        if self.closed:
            return out
        self._buf += data
        while not self.closed:
            frame = self._take()
            if frame is None:
                break
            fin, opcode, payload = frame
            self._on_frame(fin, opcode, payload, out)
        return out

    def _take(self) -> tuple[bool, int, bytes] | None:
        buf = self._buf
        if len(buf) < 2:
            return None
        b0, b1 = buf[0], buf[1]
        length, pos = b1 & 0x7F, 2
        if length == 126:
            if len(buf) < 4:
                return None
            length, pos = struct.unpack_from("!H", buf, 2)[0], 4
        elif length == 127:
            if len(buf) < 10:
                return None
            length, pos = struct.unpack_from("!Q", buf, 2)[0], 10
        key = b""
        if b1 & 0x80:  # a server must not mask (§5.1); tolerate by unmasking
            if len(buf) < pos + 4:
                return None
            key, pos = bytes(buf[pos : pos + 4]), pos + 4
        if len(buf) < pos + length:
            return None
        payload = bytes(buf[pos : pos + length])
        del buf[: pos + length]
        if key:
            payload = _mask(payload, key)
        if b0 & 0x70:
            return True, -1, b""  # an RSV bit: no extension was negotiated
        return bool(b0 & 0x80), b0 & 0x0F, payload

    def _on_frame(self, fin: bool, opcode: int, payload: bytes, out: list[Event]) -> None:
        if opcode in _CONTROL:
            if not fin or len(payload) > 125:
                return self._fail(out, "a bad control frame")
            if opcode == PING:
                out.append(Ping(payload))
            elif opcode == CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                self.closed = True
                out.append(Closed(code, payload[2:].decode("utf-8", "replace")))
            return None
        if opcode in (TEXT, BINARY):
            if self._message is not None:
                return self._fail(out, "a new message inside a fragmented one")
            self._message, self._message_op = bytearray(payload), opcode
        elif opcode == CONTINUATION:
            if self._message is None:
                return self._fail(out, "a continuation with no message")
            self._message += payload
        else:
            return self._fail(out, f"unknown opcode {opcode}")
        if fin:
            message, self._message = bytes(self._message), None
            if self._message_op == TEXT:
                out.append(Text(message))
            else:
                self.binary_dropped += 1
        return None

    def _fail(self, out: list[Event], reason: str) -> None:
        self.closed = True
        out.append(Closed(PROTOCOL_ERROR, reason))

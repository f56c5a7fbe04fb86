"""JSONL framing (PROTOCOL §2.1), sans-I/O.

``LineBuffer`` turns a byte stream into records: it splits on LF only (never on U+2028/U+2029, which
are ordinary characters inside JSON strings), strips one trailing CR, and enforces the input cap of
DESIGN §6. A line longer than the cap is never held in memory: its bytes are dropped as they arrive
and the caller gets one :class:`Oversized` record, carrying a short prefix from which the envelope's
``id`` and ``type`` can often still be read (see :func:`peek_envelope`).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
# What may be queued for one reader that does not keep up: the daemon's per-client cap (DESIGN §6,
# P2), and the output level at which ``shard agent --stdio`` stops reading its input.
DEFAULT_OUTBOUND_CAP = 16 * 1024 * 1024
_PREFIX_KEEP = 4096


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line that exceeded the cap. ``size`` counts its bytes without the LF."""

    size: int
    prefix: bytes


Record = bytes | Oversized


class LineBuffer:
    """Feed bytes in, take complete lines out."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no LF
        self._discarding: Oversized | None = None
        self._last_cr = False  # while discarding: the last dropped byte was CR

    def feed(self, data: bytes) -> list[Record]:
        """Add ``data``; return every record it completed, in order."""
        out: list[Record] = []
        view = memoryview(data)
        while view:
            if self._discarding is not None:
                offset = len(data) - len(view)
                nl = data.find(b"\n", offset)
                if nl < 0:
                    self._discarding = Oversized(self._discarding.size + len(view), self._discarding.prefix)
                    self._last_cr = data[-1:] == b"\r"
                    return out
                consumed = nl - offset
                last_cr = data[nl - 1 : nl] == b"\r" if consumed else self._last_cr
                size = self._discarding.size + consumed - (1 if last_cr else 0)
                out.append(Oversized(size, self._discarding.prefix))
                self._discarding = None
                view = view[consumed + 1 :]
                continue
            self._buf += view
            view = view[len(view) :]
            start = 0
            while True:
                nl = self._buf.find(b"\n", max(start, self._scanned))
                if nl < 0:
                    break
                line = bytes(self._buf[start:nl])
                out.append(self._finish(line))
                start = nl + 1
                self._scanned = start
            if start:
                del self._buf[:start]
            self._scanned = len(self._buf)
            # A trailing CR may still be stripped when its LF arrives, so it does not count yet:
            # the cap applies to the line as it will be read, whatever the chunking.
            pending = len(self._buf) - (1 if self._buf.endswith(b"\r") else 0)
            if pending > self.max_line_bytes:
                self._discarding = Oversized(len(self._buf), bytes(self._buf[:_PREFIX_KEEP]))
                self._last_cr = self._buf.endswith(b"\r")
                self._buf.clear()
                self._scanned = 0
        return out

    def close(self) -> list[Record]:
        """End of stream: a final line without LF is still a record."""
        out: list[Record] = []
        if self._discarding is not None:
            size = self._discarding.size - (1 if self._last_cr else 0)
            out.append(Oversized(size, self._discarding.prefix))
            self._discarding = None
        elif self._buf:
            out.append(self._finish(bytes(self._buf)))
        self._buf.clear()
        self._scanned = 0
        return out

    def _finish(self, line: bytes) -> Record:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_line_bytes:
            return Oversized(len(line), line[:_PREFIX_KEEP])
        return line


def encode_line(payload: bytes) -> bytes:
    """Terminate one encoded JSON document for a JSONL stream (R2.1.1).

    JSON encoders never emit a raw LF inside a document, so the terminator is the record boundary.
    """
    return payload + b"\n"


def peek_envelope(prefix: bytes) -> tuple[str | None, str | None]:
    """Read top-level ``"id"`` and ``"type"`` string values from the start of a JSON object.

    Used only to address the error answer to an oversized line; it gives up quietly (``None``) on
    anything it cannot read with certainty.
    """
    found: dict[str, str] = {}
    text = prefix.decode("utf-8", errors="replace")
    i, n, depth = 0, len(text), 0
    started = False
    pending_key: str | None = None
    expect_key = False
    while i < n:
        c = text[i]
        if c == '"':
            s, i = _scan_string(text, i)
            if s is None:
                break
            if depth == 1 and expect_key:
                pending_key = s
                expect_key = False
            elif depth == 1 and pending_key is not None:
                if pending_key in ("id", "type"):
                    found.setdefault(pending_key, s)
                pending_key = None
            continue
        if c in "{[":
            if not started and c == "[":
                break
            started = True
            if depth == 1:
                pending_key = None
            depth += 1
            if depth == 1:
                expect_key = True
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 1:
            expect_key = True
            pending_key = None
        elif c == ":" and depth == 1:
            pass
        elif not c.isspace() and depth == 1 and pending_key is not None:
            pending_key = None  # a non-string value: number, literal
        if started and depth == 0:
            break
        i += 1
    return found.get("id"), found.get("type")


_SIMPLE_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


def _hex4(text: str, at: int) -> int | None:
    digits = text[at : at + 4]
    if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
        return None
    return int(digits, 16)


def _scan_unicode_escape(text: str, i: int) -> tuple[str | None, int]:
    """``\\uXXXX`` at ``i`` (a surrogate pair takes two escapes); None for a lone surrogate."""
    first = _hex4(text, i + 2)
    if first is None:
        return None, i
    if 0xD800 <= first <= 0xDBFF:
        if text[i + 6 : i + 8] != "\\u":
            return None, i
        second = _hex4(text, i + 8)
        if second is None or not 0xDC00 <= second <= 0xDFFF:
            return None, i
        return chr(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)), i + 12
    if 0xDC00 <= first <= 0xDFFF:
        return None, i
    return chr(first), i + 6


def _scan_string(text: str, start: int) -> tuple[str | None, int]:
    """Read the JSON string that opens at ``start``; return it and the index after it."""
    i = start + 1
    out: list[str] = []
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text):
                return None, len(text)
            esc = text[i + 1]
            if esc in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[esc])
                i += 2
                continue
            if esc == "u":
                code, i = _scan_unicode_escape(text, i)
                if code is None:
                    return None, len(text)
                out.append(code)
                continue
            return None, len(text)
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    return None, len(text)

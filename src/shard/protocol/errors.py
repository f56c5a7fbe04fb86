"""The error-code registry of PROTOCOL §8 and the one exception root every layer raises.

Exception tree::

    ShardError                     carries an ErrorCode; becomes {code, message, data?} on the wire
     └── FrameError               a line that could not be read as a message (always INVALID_REQUEST)

Lower-library errors (pydantic, OS, provider SDKs) are translated into a ``ShardError`` once, at the
boundary that meets them; nothing above that boundary sees the foreign type.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

SHOWN_CHARS = 200  # how much of a client-supplied value an error message quotes
MAX_MESSAGE_CHARS = 2000  # the longest error message put on the wire, whatever it was built from


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for quoting in an error message, cut to at most ``limit`` characters with an
    ellipsis and the original length: an error never echoes a huge input back to its sender."""
    if isinstance(value, str | bytes):
        # Only the start of a long string can be shown, so only the start is repr'd.
        text, size = repr(value[:limit]), f"{len(value)} {'chars' if isinstance(value, str) else 'bytes'}"
        if len(value) <= limit and len(text) <= limit:
            return text
    else:
        text = repr(value)
        if len(text) <= limit:
            return text
        size = f"{len(text)} chars of repr"
    tail = f"… ({size})"
    return text[: max(0, limit - len(tail))] + tail


def capped(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` unchanged, or its start and end around a mark when it is longer than ``limit``
    (a stderr tail explains the most at its end)."""
    if len(message) <= limit:
        return message
    mark = f" … ({len(message) - limit} chars cut) … "
    keep = limit - len(mark)
    return message[: keep - keep // 2] + mark + message[len(message) - keep // 2 :]


class ErrorCode(StrEnum):
    """PROTOCOL §8 error codes. The registry is extensible; these are the v0.1 codes."""

    INVALID_REQUEST = "INVALID_REQUEST"
    NOT_FOUND = "NOT_FOUND"
    NOT_ATTACHED = "NOT_ATTACHED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    PROTOCOL_ERROR = "PROTOCOL_ERROR"
    TIMEOUT = "TIMEOUT"
    RUNTIME_START_FAILED = "RUNTIME_START_FAILED"
    SESSION_CORRUPT = "SESSION_CORRUPT"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    TOOL_ERROR = "TOOL_ERROR"
    CONFLICT = "CONFLICT"


class ShardError(Exception):
    """A failure with a protocol error code: what a command error or an ``error`` event carries."""

    def __init__(self, code: ErrorCode, message: str, data: Any = None) -> None:
        message = capped(message)  # the one place every message passes on its way to the wire
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        """``{code, message, data?}`` — plain data, never a serialized exception (R8.3)."""
        out: dict[str, Any] = {"code": self.code.value, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value}, {self.message!r})"


class FrameError(ShardError):
    """A line that is not a readable message. ``id``/``command`` are set when they could be read."""

    def __init__(self, message: str, *, id: str | None = None, command: str | None = None) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message)
        self.id = id
        self.command = command

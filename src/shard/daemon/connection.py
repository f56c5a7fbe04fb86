"""A client connection as the broker sees it: a place to send pre-encoded messages, with the
outbound cap of DESIGN §6 (P2) — past it the client is closed with a reason and nobody else notices.

Messages sent during one event-loop tick are framed, joined and written once at the end of the tick:
a runtime's burst of deltas (read many lines per tick) costs each client one system call instead of
one per message.

Transports (``unix.py``, ``websocket.py``) subclass it; none of them decides protocol questions.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from itertools import count

from shard.protocol.framing import DEFAULT_OUTBOUND_CAP

# Connection numbers (``hello.client_id``, ``source``) start at a random point per daemon process, so
# a later daemon on the same home never hands out an id a page still remembers as its own.
_ids = count(secrets.randbelow(1 << 30) + 1)


class Connection(ABC):
    transport: str = "?"

    def __init__(self, cap: int = DEFAULT_OUTBOUND_CAP) -> None:
        self.cap = cap
        self.number = next(_ids)
        self.label = ""  # what a person knows the peer as (set by the transport when it can tell)
        self.closed = False
        self.on_close: Callable[[], None] | None = None  # told once, whoever closed it
        self.close_reason: str | None = None
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._flush_scheduled = False

    def send(self, data: bytes) -> None:
        """Queue one encoded message (no newline). Never blocks; a client past the cap is dropped.

        The cap is checked against what was already queued, so one message larger than the cap
        (a big message_complete) still reaches a client that keeps up."""
        if self.closed:
            return
        if self.queued() > self.cap:
            reason = f"outbound queue over {self.cap} bytes: the client does not read fast enough"
            sys.stderr.write(f"shard daemon: closing {self!r}: {reason}\n")
            self.close(reason)
            return
        framed = self._frame(data)
        self._pending.append(framed)
        self._pending_bytes += len(framed)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self.closed or not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        self._write(data)

    def queued(self) -> int:
        """Bytes accepted but not yet handed to the operating system."""
        return self._pending_bytes + self._buffered()

    def close(self, reason: str) -> None:
        if self.closed:
            return
        slow = self.queued() > self.cap
        if not slow:
            self._flush()  # what was sent before the close still goes out
        self.closed = True
        self.close_reason = reason
        self._pending.clear()
        self._close(reason, slow)
        if self.on_close is not None:
            self.on_close()

    @abstractmethod
    def _frame(self, data: bytes) -> bytes:
        """One message as the transport carries it."""

    @abstractmethod
    def _write(self, data: bytes) -> None: ...

    @abstractmethod
    def _buffered(self) -> int:
        """Bytes in the transport's own buffer."""

    @abstractmethod
    def _close(self, reason: str, slow: bool) -> None:
        """Close the transport; ``slow``: the client stopped reading, cut it off without a goodbye."""

    def __repr__(self) -> str:
        return f"<{self.transport} connection {self.number}>"

"""A client connection as the broker sees it: a place to send pre-encoded messages, with the
outbound cap of DESIGN §6 (P2) — past it the client is closed with a reason and nobody else notices.

Transports (``unix.py``, ``websocket.py``) subclass it; none of them decides protocol questions.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from itertools import count

DEFAULT_OUTBOUND_CAP = 16 * 1024 * 1024
_ids = count(1)


class Connection(ABC):
    transport: str = "?"

    def __init__(self, cap: int = DEFAULT_OUTBOUND_CAP) -> None:
        self.cap = cap
        self.number = next(_ids)
        self.attached: dict[str, str] = {}  # agent_id -> role ("interactive" | "observer")
        self.closed = False
        self.close_reason: str | None = None

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
        self._write(data)

    def close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        self._close(reason)

    @abstractmethod
    def _write(self, data: bytes) -> None: ...

    @abstractmethod
    def queued(self) -> int:
        """Bytes accepted but not yet handed to the operating system."""

    @abstractmethod
    def _close(self, reason: str) -> None: ...

    def __repr__(self) -> str:
        return f"<{self.transport} connection {self.number}>"

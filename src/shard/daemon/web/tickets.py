"""Single-use, short-lived credentials held in memory (WS tickets, enrollment codes) and the limit on
wrong guesses. Pure: the clock is injected, so expiry is tested without sleeping.

Every credential is 256 random bits (``secrets.token_urlsafe(32)``) and is kept only as its SHA-256.
A fast hash is enough, and the right one, for secrets of full entropy: a slow password hash exists
to make guessing a *low-entropy* secret expensive, and 2**256 guesses are out of reach at any speed;
looking a presented secret up by its hash also means no comparison whose timing depends on how
much of a stored secret an attacker guessed right.

Tickets and enrollment codes live only in the daemon's memory: they last seconds to minutes, a
restart voids them (the daemon prints a new link), and nothing about them ever reaches the disk.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

TICKET_TTL = 30.0
ENROLLMENT_TTL = 600.0


def new_secret() -> str:
    """256 random bits, URL- and token-safe (a cookie value, a Sec-WebSocket-Protocol token)."""
    return secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """What is kept of a secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class _Entry(Generic[T]):
    value: T
    expires: float


class SingleUse(Generic[T]):
    """Secrets that each redeem once, before ``ttl`` seconds have passed, for the value they were
    issued with. Taking a secret removes it whatever the caller then decides, so a ticket shown from
    the wrong origin is burnt too."""

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        self._clock = clock
        self._live: dict[str, _Entry[T]] = {}

    def issue(self, value: T) -> tuple[str, float]:
        """A new secret for ``value`` and its lifetime in seconds; only its hash is kept."""
        self._prune()
        secret = new_secret()
        self._live[digest(secret)] = _Entry(value, self._clock() + self.ttl)
        return secret, self.ttl

    def take(self, secret: str) -> T | None:
        """The value of a live secret, consuming it; None for unknown, used or expired."""
        entry = self._live.pop(digest(secret), None)
        if entry is None or self._clock() >= entry.expires:
            return None
        return entry.value

    def discard(self, keep: Callable[[T], bool]) -> None:
        """Drop every live secret whose value ``keep`` refuses (a revoked session's tickets)."""
        self._live = {key: e for key, e in self._live.items() if keep(e.value)}

    def __len__(self) -> int:
        self._prune()
        return len(self._live)

    def _prune(self) -> None:
        now = self._clock()
        self._live = {key: e for key, e in self._live.items() if e.expires > now}


class FailureLimit:
    """At most ``limit`` failures per ``window`` seconds; past it :meth:`blocked` until the window
    that saw them ends. Global, not per peer: on loopback every peer is 127.0.0.1 (another local
    user's guesses and the owner's try look alike) and behind a proxy every peer is the proxy. So it
    only ever answers *wrong* codes — a live code redeems whatever the count (``WebAuth.enroll``),
    and no flood can keep the owner out; 256-bit codes cannot be guessed anyway, so the limit just
    keeps a flood cheap."""

    def __init__(self, clock: Callable[[], float], limit: int = 5, window: float = 60.0) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._failures: list[float] = []

    def blocked(self) -> bool:
        now = self._clock()
        self._failures = [t for t in self._failures if now - t < self.window]
        return len(self._failures) >= self.limit

    def failed(self) -> None:
        self._failures.append(self._clock())

    def retry_after(self) -> int:
        """Whole seconds until the oldest failure leaves the window."""
        if not self._failures:
            return 0
        return max(1, int(self._failures[0] + self.window - self._clock()) + 1)

"""Opaque, prefixed, random identifiers (DESIGN §6): never sequential, never derived from names."""

from __future__ import annotations

import os

PREFIXES = frozenset(
    {"agent", "sess", "job", "run", "ws", "req", "tc", "msg", "turn", "ent", "fork", "steer", "queue"}
)


def new_id(prefix: str) -> str:
    """``<prefix>-<16 random hex digits>``."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}")
    return f"{prefix}-{os.urandom(8).hex()}"


def is_session_id(value: str) -> bool:
    """True when ``value`` is safe to use as a session directory name."""
    if not value.startswith("sess-") or len(value) > 128:
        return False
    rest = value[5:]
    return bool(rest) and all(c.isascii() and (c.isalnum() or c in "-_") for c in rest)

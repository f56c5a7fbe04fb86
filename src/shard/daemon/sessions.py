"""What the daemon needs to know of session files — where one is, and its first line — read without
the agent layer (which only runtimes load)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import is_session_id

SESSION_FILE = "session.jsonl"


def path_of(home: Path, session_id: str) -> Path | None:
    if not is_session_id(session_id):
        return None
    direct = home / "sessions" / session_id / SESSION_FILE
    if direct.is_file():
        return direct
    return next(iter((home / "sessions").glob(f"*/forks/{session_id}/{SESSION_FILE}")), None)


def exists(home: Path, session_id: str) -> bool:
    return path_of(home, session_id) is not None


def header_of(home: Path, session_id: str) -> dict[str, Any]:
    """The session's first entry; NOT_FOUND when there is no such session, SESSION_CORRUPT when its
    first line is not a header (or a fork's checkpoint)."""
    path = path_of(home, session_id)
    if path is None:
        raise ShardError(ErrorCode.NOT_FOUND, f"no session {shown(session_id)}")
    try:
        with open(path, "rb") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        raise ShardError(ErrorCode.SESSION_CORRUPT, f"session {session_id} has no readable header") from None
    kind = header.get("kind") if isinstance(header, dict) else None
    if kind not in ("header", "checkpoint") or header.get("session_id") != session_id:
        raise ShardError(ErrorCode.SESSION_CORRUPT, f"session {session_id} does not start with its header")
    return header

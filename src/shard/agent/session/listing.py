"""Session listings — ``session_op list`` (one working directory) and ``shard sessions`` (all) —
newest first, without reading whole files.

Each session directory holds ``meta.json`` beside its JSONL — title (the first prompt), created,
updated, message count — rewritten atomically by the runtime at the end of each turn. Listing reads
only those small files (and a session's first line when its meta is missing: older or crashed
sessions, whose counts are then taken from a scan). Forks live under their source's ``forks/``
folder and are listed both on their own and under their source.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from shard._home import write_private
from shard.agent.session.store import SESSION_FILE, sessions_dir

META_FILE = "meta.json"
TITLE_CHARS = 80
HEAD_BYTES = 64 * 1024  # how much of a session without meta.json a command-line listing reads


def write_meta(session_file: Path, meta: dict[str, Any]) -> None:
    """Replace ``meta.json`` atomically (a crash leaves the old one or the new one)."""
    write_private(session_file.with_name(META_FILE), json.dumps(meta, ensure_ascii=False).encode())


def title_of(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def all_sessions(home: Path, *, head_bytes: int | None = None) -> list[dict[str, Any]]:
    """Every session under ``$SHARD_HOME/sessions`` — forks included, each with its ``cwd`` and,
    for a fork, ``source_session_id`` — newest ``updated`` first.

    A session without meta.json is described from its file; ``head_bytes`` bounds how much of it is
    read (its ``message_count`` is None when the file is longer), so a listing costs the same
    whatever the size of the transcripts.
    """
    root = sessions_dir(home)
    found: list[dict[str, Any]] = []
    try:
        top = list(os.scandir(root))
    except FileNotFoundError:
        return []
    for d in top:
        if not d.is_dir():
            continue
        session_dir = Path(d.path)
        info = _describe(session_dir, head_bytes)
        if info is not None:
            found.append(info)
        forks = session_dir / "forks"
        if forks.is_dir():
            for f in os.scandir(forks):
                fork = _describe(Path(f.path), head_bytes) if f.is_dir() else None
                if fork is not None:
                    found.append(fork)
    found.sort(key=lambda s: s["updated"], reverse=True)
    return found


def sessions_in(home: Path, cwd: str, *, head_bytes: int | None = None) -> list[dict[str, Any]]:
    """The sessions whose working directory is ``cwd`` (compared after resolving links), newest
    first."""
    real = os.path.realpath(cwd)
    return [
        s
        for s in all_sessions(home, head_bytes=head_bytes)
        if s.get("cwd") and os.path.realpath(s["cwd"]) == real
    ]


def list_sessions(home: Path, cwd: str) -> list[dict[str, Any]]:
    """``session_op list``: the sessions of ``cwd``, newest first, each with its forks."""
    everything = all_sessions(home)
    forks_by_source: dict[str, list[dict[str, Any]]] = {}
    for s in everything:
        if s.get("source_session_id"):
            forks_by_source.setdefault(s["source_session_id"], []).append(s)
    mine = [s for s in everything if s.pop("cwd", None) == cwd]
    for s in mine:
        forks = forks_by_source.get(s["session_id"])
        if forks:
            s["forks"] = [
                {
                    "session_id": f["session_id"],
                    "source_session_id": s["session_id"],
                    "source_entry_id": f.get("source_entry_id", ""),
                    "created": f["created"],
                }
                for f in sorted(forks, key=lambda f: f["created"])
            ]
    return mine


def _describe(session_dir: Path, head_bytes: int | None) -> dict[str, Any] | None:
    path = session_dir / SESSION_FILE
    try:
        stat = path.stat()
    except OSError:
        return None
    try:
        meta = _checked(json.loads((session_dir / META_FILE).read_text()))
    except (OSError, ValueError):
        meta = {}
    if not meta.get("session_id"):
        meta = _checked(_scan(path, head_bytes))
    if not meta.get("session_id"):
        return None
    created = meta.get("created") or stat.st_ctime
    info: dict[str, Any] = {
        "session_id": meta["session_id"],
        "created": created,
        # the file's mtime counts (appends after the last meta refresh); it is coarser than the clock
        "updated": max(meta.get("updated", 0), stat.st_mtime, created),
        "message_count": meta.get("message_count", 0),
        "cwd": meta.get("cwd"),
    }
    if meta.get("title"):
        info["title"] = meta["title"]
    if meta.get("source_session_id"):
        info["source_session_id"] = meta["source_session_id"]
        info["source_entry_id"] = meta.get("source_entry_id", "")
    return info


_TYPES: dict[str, tuple[type, ...]] = {
    "session_id": (str,),
    "cwd": (str,),
    "title": (str,),
    "source_session_id": (str,),
    "source_entry_id": (str,),
    "created": (int, float),
    "updated": (int, float),
    "message_count": (int, type(None)),
}


def _checked(meta: Any) -> dict[str, Any]:
    """The fields of ``meta`` that have the type a listing expects (meta.json is a file anyone can
    edit: a wrong type is dropped, never passed on to fail later)."""
    if not isinstance(meta, dict):
        return {}
    return {
        k: v
        for k, v in meta.items()
        if k in _TYPES
        and isinstance(v, _TYPES[k])
        and not isinstance(v, bool)
        and (not isinstance(v, float) or math.isfinite(v))
    }


def _scan(path: Path, limit: int | None) -> dict[str, Any]:
    """Without meta.json: the header line, then a count over the file — or over its first ``limit``
    bytes, when the count is unknown (None) unless the whole file fit."""
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError:
        return {}
    whole = limit is None or len(data) <= limit
    lines = data.split(b"\n") if whole else data[:limit].split(b"\n")[:-1]  # never a cut line
    try:
        first = json.loads(lines[0] or b"{}")
    except ValueError:
        return {}
    if not isinstance(first, dict):
        return {}
    meta = {
        "session_id": first.get("session_id"),
        "cwd": first.get("cwd"),
        "created": first.get("ts"),
        "source_session_id": first.get("sourceSessionId"),
        "source_entry_id": first.get("sourceEntryId"),
    }
    count = 0
    for line in lines[1:]:
        if b'"kind":"message"' in line or b'"kind":"tool_result"' in line:
            count += 1
            untitled = first.get("delegated")  # a background child's first prompt is its private task
            if (
                not untitled
                and "title" not in meta
                and b'"role":"user"' in line
                and b'"kind":"message"' in line
            ):
                text = _first_text(line)
                if text:
                    meta["title"] = title_of(text)
    meta["message_count"] = count
    found = {k: v for k, v in meta.items() if v is not None}
    if not whole:
        found["message_count"] = None  # unknown: only the head was read
    return found


def _first_text(line: bytes) -> str | None:
    try:
        entry = json.loads(line)
        for block in entry["message"]["content"]:
            if block.get("type") == "text":
                return block["text"]
    except (ValueError, KeyError, TypeError):
        return None
    return None

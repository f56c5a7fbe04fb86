"""The session JSONL store (DESIGN §6): ``$SHARD_HOME/sessions/<session_id>/session.jsonl``.

One entry per line, each ``{id, parent_id, kind, ts, ...}``; the first is the ``header`` (or, in a
fork, the fork-marker ``checkpoint``, which carries the same fields). Entries form
one chain (``parent_id`` is the previous entry's id). Appends go to an ``O_APPEND`` descriptor as one
``write`` per entry, so by the time :meth:`SessionStore.append` returns the entry is in the OS and
survives a crash of this process; the caller sends the event that reports it only afterwards.

Loading tolerates exactly one kind of damage: a torn last line (a write cut short by a crash, so no
terminating LF). It is ignored, set aside to ``session.jsonl.torn`` and cut off so that the next append
starts on a clean line. Anything else — a bad line in the middle, a broken chain, a missing header —
raises SESSION_CORRUPT and the file is not touched.

The store works on plain dicts and imports neither pydantic nor orjson at load: the start-up path reads
it before the first message goes out (orjson, for appends, loads on the first write).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shard._home import open_private, private_dirs
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import is_session_id, new_id

SESSION_FILE = "session.jsonl"
FORMAT_VERSION = 1
_RESERVED = frozenset({"id", "parent_id", "kind", "ts"})


def corrupt(path: Path, why: str) -> ShardError:
    return ShardError(ErrorCode.SESSION_CORRUPT, f"session {path} cannot be restored: {why}")


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def find_session(home: Path, session_id: str) -> Path:
    """The JSONL file of ``session_id`` (a top-level session or a fork), or NOT_FOUND."""
    if not is_session_id(session_id):
        raise ShardError(ErrorCode.NOT_FOUND, f"no session {shown(session_id)}: not a session id")
    root = sessions_dir(home)
    direct = root / session_id / SESSION_FILE
    if direct.is_file():
        return direct
    for candidate in root.glob(f"*/forks/{session_id}/{SESSION_FILE}"):
        return candidate
    raise ShardError(ErrorCode.NOT_FOUND, f"no session {shown(session_id)} under {root}")


class SessionStore:
    """An open session transcript. Created lazily: nothing is written until the first append."""

    def __init__(
        self, path: Path, session_id: str, entries: list[dict[str, Any]], *, unborn: bool = False
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.entries = entries
        self._unborn = unborn
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._last: dict[str, dict[str, Any]] | None = None

    # --- construction -----------------------------------------------------------------------

    @classmethod
    def new(
        cls,
        home: Path,
        *,
        cwd: str,
        model: str | None,
        mode: str,
        session_id: str | None = None,
        delegated: bool = False,
        context: dict[str, Any] | None = None,
    ) -> SessionStore:
        session_id = session_id or new_id("sess")
        path = sessions_dir(home) / session_id / SESSION_FILE
        header = {
            "id": new_id("ent"),
            "parent_id": None,
            "kind": "header",
            "ts": time.time(),
            "version": FORMAT_VERSION,
            "session_id": session_id,
            "cwd": cwd,
            "model": model,
            "mode": mode,
        }
        if delegated:  # a background child's: its first prompt is a private task, never a title
            header["delegated"] = True
        if context:  # project instructions and environment, fixed for the session's life
            header.update(context)
        return cls(path, session_id, [header], unborn=True)

    @classmethod
    def open(cls, path: Path) -> SessionStore:
        """Load an existing transcript for appending (a torn tail is set aside).

        The session is locked first (CONFLICT when another process has it open): only one writer
        ever appends to a transcript, and a tail another process is still writing is never
        mistaken for a torn one."""
        lock = _lock(path)
        try:
            entries = load_entries(path, repair=True)
        except BaseException:
            os.close(lock)
            raise
        store = cls(path, entries[0]["session_id"], entries)
        store._lock_fd = lock
        return store

    # --- reading ----------------------------------------------------------------------------

    @property
    def header(self) -> dict[str, Any]:
        return self.entries[0]

    @property
    def head_id(self) -> str:
        return self.entries[-1]["id"]

    @property
    def exists(self) -> bool:
        return not self._unborn

    def last(self, kind: str) -> dict[str, Any] | None:
        """The latest entry of ``kind`` (indexed: restores ask this on 10,000-entry sessions)."""
        if self._last is None:
            self._last = {e["kind"]: e for e in self.entries}
        return self._last.get(kind)

    # --- writing ----------------------------------------------------------------------------

    def append(self, kind: str, /, *, entry_id: str | None = None, **fields: Any) -> dict[str, Any]:
        """Write one entry and return it. Raises ShardError(INTERNAL_ERROR) if the disk refuses."""
        if _RESERVED & fields.keys():
            raise ValueError(f"entry fields may not set {sorted(_RESERVED & fields.keys())}")
        entry = {
            "id": entry_id or new_id("ent"),
            "parent_id": self.head_id,
            "kind": kind,
            "ts": time.time(),
            **fields,
        }
        line = _dumps(entry)
        try:
            if self._unborn:
                self._birth()
            self._write(line)
        except OSError as exc:
            raise ShardError(
                ErrorCode.INTERNAL_ERROR, f"cannot write session {self.path}: {exc.strerror}"
            ) from None
        self.entries.append(entry)
        if self._last is not None:
            self._last[kind] = entry
        return entry

    def sync(self) -> None:
        """fsync: make what was appended durable across a power loss, not just a process crash."""
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _birth(self) -> None:
        private_dirs(self.path.parent)
        fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_EXCL)
        self._fd = fd
        self._lock_fd = _lock(self.path)
        self._unborn = False
        self._write(_dumps(self.entries[0]))

    def _write(self, line: bytes) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        view = memoryview(line)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]


def _lock(path: Path) -> int:
    """An exclusive lock on the session file for this process's lifetime (a non-inheritable fd, so
    tool subprocesses never hold it); CONFLICT when another process holds it."""
    busy = f"session {path.parent.name} is open in another shard process; close that one first"
    try:
        return lock_exclusive(path, busy=busy)
    except FileNotFoundError:
        raise ShardError(ErrorCode.NOT_FOUND, f"no session file {path}") from None


def lock_exclusive(path: Path, *, busy: str, extra_flags: int = 0) -> int:
    """Take the exclusive ``flock`` every writer of a session holds: the fd, or CONFLICT (``busy``)
    when another process has it. OSError from opening the file is the caller's to explain."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | extra_flags)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ShardError(ErrorCode.CONFLICT, busy) from None
    return fd


def load_entries(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """Read and check a session file (see the module docstring for what is tolerated).

    ``repair`` sets a torn tail aside; without it the file is only read.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ShardError(ErrorCode.NOT_FOUND, f"no session file {path}") from None
    except OSError as exc:
        raise corrupt(path, exc.strerror or "unreadable") from None
    loads: Callable[[bytes], Any] = json.loads
    if len(data) > 256 * 1024:  # orjson parses big sessions ~3x faster; small ones do not pay its import
        import orjson

        loads = orjson.loads
    complete_end = data.rfind(b"\n") + 1
    torn = data[complete_end:]
    lines = data[:complete_end].split(b"\n")[:-1]
    parsed = _parse_all(data[:complete_end], loads, len(lines))
    entries: list[dict[str, Any]] = []
    ids: set[str] = set()
    previous: str | None = None
    for lineno, line in enumerate(lines, start=1):
        entry = parsed[lineno - 1] if parsed is not None else _parse_line(path, lineno, line, loads)
        _check_entry(path, lineno, entry)
        entry_id = entry["id"]
        if entry_id in ids:
            raise corrupt(path, f"line {lineno}: duplicate entry id {entry_id!r}")
        if entry["parent_id"] != previous:
            raise corrupt(path, f"line {lineno}: parent_id does not follow the previous entry")
        ids.add(entry_id)
        entries.append(entry)
        previous = entry_id
    if not entries:
        raise corrupt(path, "no header line")
    header = entries[0]
    is_fork = header["kind"] == "checkpoint" and header.get("artifactKind") == "fork"
    if (header["kind"] != "header" and not is_fork) or not isinstance(header.get("session_id"), str):
        raise corrupt(path, "line 1 is neither a session header nor a fork checkpoint")
    if not isinstance(header.get("version"), int) or header["version"] > FORMAT_VERSION:
        raise corrupt(path, f"unsupported session format version {header.get('version')!r}")
    if torn and repair:
        _set_aside_torn_tail(path, complete_end, torn)
    return entries


def _parse_all(data: bytes, loads: Callable[[bytes], Any], count: int) -> list[Any] | None:
    """Every line in one parse (much faster than one call a line); None if any line is not JSON,
    in which case the lines are parsed one by one to say which."""
    if not data:
        return []
    try:
        parsed = loads(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, list) and len(parsed) == count else None


def _parse_line(path: Path, lineno: int, line: bytes, loads: Callable[[bytes], Any]) -> Any:
    try:
        return loads(line)
    except (ValueError, RecursionError):
        raise corrupt(path, f"line {lineno} is not valid JSON") from None


def _check_entry(path: Path, lineno: int, entry: Any) -> dict[str, Any]:
    # type() rather than isinstance: exact JSON types, and this runs once per entry of every restore
    if type(entry) is not dict:
        raise corrupt(path, f"line {lineno} is not a JSON object")
    if type(entry.get("id")) is not str or type(entry.get("kind")) is not str:
        raise corrupt(path, f"line {lineno} lacks a string 'id' and 'kind'")
    parent = entry.get("parent_id", ...)
    if parent is not None and type(parent) is not str:
        raise corrupt(path, f"line {lineno} lacks 'parent_id'")
    if type(entry.get("ts")) not in (int, float):
        raise corrupt(path, f"line {lineno} lacks a numeric 'ts'")
    return entry


def _dumps(entry: dict[str, Any]) -> bytes:
    import orjson

    return orjson.dumps(entry) + b"\n"


def _set_aside_torn_tail(path: Path, complete_end: int, torn: bytes) -> None:
    # Keep the torn bytes for forensics, then cut them off so the next append starts a clean line.
    # Nothing is cut unless the bytes were kept: a full disk leaves the file as it was.
    try:
        fd = open_private(path.with_name(path.name + ".torn"), os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(torn + b"\n")
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.truncate(path, complete_end)
    except OSError as exc:
        raise ShardError(
            ErrorCode.INTERNAL_ERROR,
            f"cannot set aside the torn last line of {path}: {exc.strerror}; the file was not changed",
        ) from None

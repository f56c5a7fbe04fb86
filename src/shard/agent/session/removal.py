"""Removing a session folder (``shard sessions rm``) without harming what is in use or outside.

* **Only inside the sessions folder.** The session is looked up without following links: its
  folder — and for a fork, the source's folder and its ``forks/`` — must be real directories under
  ``$SHARD_HOME/sessions``, and its ``session.jsonl`` a regular file. A link anywhere on that path is
  refused, so nothing outside is ever removed (inside the folder, ``shutil.rmtree`` removes links
  without following them).
* **Never in use.** A live runtime holds an exclusive ``flock`` on its ``session.jsonl`` for as long
  as it runs (``store.py``). Removal takes the same lock, without waiting — CONFLICT when another
  process has it — and keeps it until the folder is gone, so no runtime can open the session
  meanwhile.
* **Forks go with their source.** A fork lives inside its source's folder: removing a source that has
  forks is CONFLICT unless they are removed too (each checked and locked the same way).

Whether a daemon agent is bound to the session is for the caller to check (the registry is the
daemon's) between :func:`lock_for_removal` and :meth:`Removal.remove`, while the locks are held.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from shard.agent.session.store import SESSION_FILE, lock_exclusive, sessions_dir
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import is_session_id


class Removal:
    """Sessions locked for removal: ``session_ids`` (the session first, then any forks going with
    it) and the one folder that :meth:`remove` deletes."""

    def __init__(self, folder: Path, session_ids: list[str]) -> None:
        self.folder = folder
        self.session_ids = session_ids

    def remove(self) -> None:
        try:
            shutil.rmtree(self.folder)
        except OSError as exc:
            raise ShardError(
                ErrorCode.INTERNAL_ERROR, f"cannot remove {self.folder}: {exc.strerror or exc}"
            ) from None


@contextlib.contextmanager
def lock_for_removal(home: Path, session_id: str, *, with_forks: bool = False) -> Iterator[Removal]:
    """Find ``session_id``'s folder safely and lock it and its forks (see the module docstring).

    Raises NOT_FOUND (no such session), CONFLICT (in use, or forks without ``with_forks``) or
    INVALID_REQUEST (a link on the way)."""
    root = sessions_dir(home)
    folder = _locate(root, session_id)
    forks = _forks_of(folder)
    if forks and not with_forks:
        names = ", ".join(forks[:3]) + (f" and {len(forks) - 3} more" if len(forks) > 3 else "")
        raise ShardError(
            ErrorCode.CONFLICT,
            f"session {session_id} has {len(forks)} fork{'s' if len(forks) > 1 else ''} ({names}) inside its "
            "folder; remove them first, or pass --forks to remove them with it",
        )
    locks: list[int] = []
    try:
        locks.append(_lock(folder / SESSION_FILE, session_id))
        for fork in forks:
            locks.append(_lock(folder / "forks" / fork / SESSION_FILE, fork))
        yield Removal(folder, [session_id, *forks])
    finally:
        for fd in locks:
            os.close(fd)


def _locate(root: Path, session_id: str) -> Path:
    if not is_session_id(session_id):
        raise ShardError(ErrorCode.NOT_FOUND, f"no session {shown(session_id)}: not a session id")
    direct = root / session_id
    if os.path.lexists(direct):
        return _checked(root, direct, session_id)
    try:
        sources = [Path(e.path) for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        sources = []
    for source in sources:
        candidate = source / "forks" / session_id
        if os.path.lexists(candidate):
            return _checked(root, candidate, session_id)
    raise ShardError(ErrorCode.NOT_FOUND, f"no session {shown(session_id)} under {root}")


def _checked(root: Path, folder: Path, session_id: str) -> Path:
    """``folder`` when it and every folder between it and ``root`` is a real directory and its
    session file a regular file; INVALID_REQUEST at the first link."""
    level = folder
    while level != root:
        if os.path.islink(level):
            raise ShardError(
                ErrorCode.INVALID_REQUEST,
                f"{level} is a symbolic link (to {os.readlink(level)}); shard removes nothing outside {root}",
            )
        level = level.parent
    try:
        st = os.lstat(folder / SESSION_FILE)
    except FileNotFoundError:
        raise ShardError(
            ErrorCode.NOT_FOUND, f"no session {session_id}: {folder} has no {SESSION_FILE}"
        ) from None
    if not stat.S_ISDIR(os.lstat(folder).st_mode) or not stat.S_ISREG(st.st_mode):
        raise ShardError(
            ErrorCode.INVALID_REQUEST, f"{folder / SESSION_FILE} is not a regular file; not removed"
        )
    return folder


def _forks_of(folder: Path) -> list[str]:
    try:
        entries = list(os.scandir(folder / "forks"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(
        e.name
        for e in entries
        if is_session_id(e.name)
        and e.is_dir(follow_symlinks=False)
        and os.path.lexists(Path(e.path) / SESSION_FILE)
    )


def _lock(path: Path, session_id: str) -> int:
    busy = (
        f"session {session_id} is in use by a running shard process (an agent, a shard run or a "
        "daemon's runtime); stop it first"
    )
    try:
        return lock_exclusive(path, busy=busy, extra_flags=os.O_NOFOLLOW)
    except OSError as exc:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"cannot open {path}: {exc.strerror}") from None

"""Reading an agent's folder for ``fs.list`` / ``fs.read`` and folders for ``fs.complete``: blocking
file-system work, run in a worker thread (``effects.Offload``). Each function answers a result model
or raises :class:`ShardError` with the protocol's code.

What is shown of an agent's folder, and what is not:

* **Nothing outside it.** Every path is resolved (``realpath``) and must stay under the folder's own
  resolved path. A symlink that leads outside (or nowhere) is *listed* — as kind ``link``, so the
  tree matches what ``ls`` shows — but never followed or opened: PERMISSION_DENIED. A file is
  opened without following a final symlink (``O_NOFOLLOW``) and what was opened is checked again
  through ``/proc/self/fd``, so a path swapped for a symlink between the check and the open is
  caught too. Only regular files are read (a FIFO would block the reader; ``O_NONBLOCK`` on open).
* **Nothing ignored.** ``.git`` never, and whatever ``.gitignore`` / ``.ignore`` / ``.rgignore``
  (in the folder, below it and above it) and ``.git/info/exclude`` exclude, as the agent's own
  grep and find see the folder (``shard._ignore``); a file reached through a symlink is checked at
  both its names. Ignored entries are counted (``hidden``), never named; opened, they are
  PERMISSION_DENIED.
* **No keys.** ``$SHARD_HOME`` (sessions, enrollment, ``state.db``) and the home's credential
  places (``shard._secret_places``: ``~/.ssh``, ``~/.aws``, …, the list the bash sandbox hides) are
  neither listed nor opened when they lie inside the folder — an agent made in ``$HOME`` shows the
  home without them. One that *contains* the folder is not applied: a workspace's worktree lives
  under ``$SHARD_HOME/worktrees``, and a folder chosen inside ``~/.ssh`` was chosen.
* **Bounded.** A listing holds at most :data:`MAX_ENTRIES` entries, a read at most :data:`MAX_READ`
  bytes (``truncated`` beyond); a file with a NUL byte in its first :data:`SNIFF` bytes, or that is
  not UTF-8, is ``binary`` and sent without its text.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from shard._ignore import IgnoreStack, anchor_stack, read_rules
from shard.daemon.files.paths import HIDDEN_ALWAYS, completion_split, inside, relative
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.results import FsCompleteResult, FsEntry, FsListResult, FsReadResult

MAX_ENTRIES = 2000
MAX_READ = 1024 * 1024
SNIFF = 8192
MAX_COMPLETIONS = 50


def _root(cwd: str) -> str:
    root = os.path.realpath(cwd)
    if not os.path.isdir(root):
        raise ShardError(ErrorCode.NOT_FOUND, "the agent's folder no longer exists")
    return root


class _Rules:
    """The ignore rules of one folder, walked down from its root one directory at a time, and the
    places (resolved) never shown inside it."""

    def __init__(self, root: str, hidden: tuple[str, ...]) -> None:
        self.root = root
        self.base, self.anchor = anchor_stack(Path(root))
        places = (os.path.realpath(h) for h in hidden)
        self.hidden = tuple(h for h in places if not inside(h, root))  # one holding the folder: chosen

    def secret(self, real: str) -> bool:
        return any(inside(h, real) for h in self.hidden)

    def secret_names(self, folder: str) -> frozenset[str]:
        """The entries of ``folder`` (resolved, itself shown) that are hidden places: one inside a
        hidden place is the place itself, since the folder is not inside one."""
        return frozenset(os.path.basename(h) for h in self.hidden if os.path.dirname(h) == folder)

    def key(self, parts: list[str]) -> bytes:
        return self.anchor + os.fsencode("/".join(parts))

    def folder(self, parts: list[str]) -> IgnoreStack | None:
        """The rules in force in ``root/parts``; None when it, or a folder above it, is ignored."""
        stack = self.base
        for depth in range(1, len(parts) + 1):
            key = self.key(parts[:depth])
            if stack.ignored(key, True):
                return None
            stack = stack.child(key + b"/", read_rules(Path(self.root, *parts[:depth])))
        return stack

    def shows(self, parts: list[str], is_dir: bool) -> bool:
        if HIDDEN_ALWAYS in parts:
            return False
        stack = self.folder(parts[:-1] if parts else [])
        if stack is None:
            return False
        return not parts or not stack.ignored(self.key(parts), is_dir)


def _resolve(
    cwd: str, parts: list[str], is_dir: bool, hidden: tuple[str, ...]
) -> tuple[_Rules, str, list[str]]:
    """The rules, the resolved path and its components, once every check of the module passed."""
    root = _root(cwd)
    rules = _Rules(root, hidden)
    shown_path = "/".join(parts) or "."
    real = os.path.realpath(os.path.join(root, *parts))
    if not inside(root, real):
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(shown_path)} leads outside the agent's folder")
    if rules.secret(real):
        raise ShardError(
            ErrorCode.PERMISSION_DENIED, f"{shown(shown_path)} holds keys or Shard's state: not shown"
        )
    # the way out first, then the ignore files: none is read outside the folder
    if not rules.shows(parts, is_dir):
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(shown_path)} is ignored, so not shown")
    real_parts = relative(root, real)
    if real_parts != parts and not rules.shows(real_parts, is_dir):
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(shown_path)} leads to something not shown")
    return rules, real, real_parts


def list_folder(cwd: str, parts: list[str], hidden: tuple[str, ...] = ()) -> FsListResult:
    """``hidden``: resolved paths never shown (``$SHARD_HOME``, the home's credential places)."""
    rules, real, real_parts = _resolve(cwd, parts, True, hidden)
    path = "/".join(parts)
    stack = rules.folder(real_parts)
    assert stack is not None  # _resolve checked it
    try:
        with os.scandir(real) as it:
            found = list(it)
    except FileNotFoundError:
        raise ShardError(ErrorCode.NOT_FOUND, f"no folder {shown(path)}") from None
    except NotADirectoryError:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"{shown(path)} is a file: fs.read") from None
    except PermissionError:
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(path)}: permission denied") from None
    entries: list[FsEntry] = []
    hidden = 0
    secrets = rules.secret_names(real)
    for entry in found:
        listed = None if entry.name in secrets else _entry(rules, stack, real_parts, entry)
        if listed is None:
            hidden += 1
        else:
            entries.append(listed)
    entries.sort(key=lambda e: (e.kind != "dir", e.name.casefold(), e.name))
    return FsListResult(
        path=path,
        entries=entries[:MAX_ENTRIES],
        hidden=hidden,
        truncated=len(entries) > MAX_ENTRIES,
    )


def _entry(rules: _Rules, stack: IgnoreStack, at: list[str], entry: os.DirEntry[str]) -> FsEntry | None:
    if entry.name == HIDDEN_ALWAYS:
        return None
    try:
        link = entry.is_symlink()
        is_dir = entry.is_dir()  # a link: its target's kind
        is_file = entry.is_file()
    except OSError:
        return None
    if stack.ignored(rules.key([*at, entry.name]), is_dir):
        return None
    if link:
        target = os.path.realpath(entry.path)
        if rules.secret(target):
            return None
        if not inside(rules.root, target) or not (is_dir or is_file):
            return FsEntry(name=entry.name, kind="link")
    marked = {"symlink": True} if link else {}
    if is_dir:
        return FsEntry(name=entry.name, kind="dir", **marked)
    if not is_file:
        return None  # a FIFO, a socket, a device: nothing to read
    try:
        size = entry.stat().st_size
    except OSError:
        return None
    return FsEntry(name=entry.name, kind="file", size=size, **marked)


def read_file(cwd: str, parts: list[str], hidden: tuple[str, ...] = ()) -> FsReadResult:
    rules, real, _ = _resolve(cwd, parts, False, hidden)
    path = "/".join(parts)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise ShardError(ErrorCode.NOT_FOUND, f"no file {shown(path)}") from None
    except PermissionError:
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(path)}: permission denied") from None
    except OSError:  # ELOOP: a symlink put there since it was resolved
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(path)} changed while being opened") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = "is a folder: fs.list" if stat.S_ISDIR(info.st_mode) else "is not a regular file"
        raise ShardError(ErrorCode.INVALID_REQUEST, f"{shown(path)} {what}")
    with os.fdopen(fd, "rb") as f:
        opened = f"/proc/self/fd/{f.fileno()}"
        again = os.path.realpath(opened) if os.path.exists(opened) else real
        if not inside(rules.root, again) or rules.secret(again):
            raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(path)} changed while being opened")
        data = f.read(MAX_READ + 1)
    truncated = len(data) > MAX_READ
    data = data[:MAX_READ]
    text = _text(data, truncated)
    body = {"text": text} if text is not None else {}
    size = max(info.st_size, len(data))
    return FsReadResult(
        path=path, size=size, binary=text is None, truncated=truncated, limit=MAX_READ, **body
    )


def _text(data: bytes, cut: bool) -> str | None:
    """The text of ``data``, or None when it looks binary. A cut file may end inside a character."""
    if b"\0" in data[:SNIFF]:
        return None
    for drop in range(4 if cut else 1):
        with contextlib.suppress(UnicodeDecodeError):
            return data[: len(data) - drop].decode("utf-8")
    return None


def complete(prefix: str, shard_home: str | None) -> FsCompleteResult:
    """The folders ``prefix`` may go on with: never ``$SHARD_HOME`` or anything in it (agents'
    sessions and the daemon's keys live there), hidden ones only when the name typed starts with a
    dot, directories only (a symlink to one counts)."""
    folder, start = completion_split(prefix)
    home = os.path.realpath(shard_home) if shard_home else None
    real = os.path.realpath(folder)
    if home is not None and inside(home, real):
        return FsCompleteResult(directories=[], truncated=False)
    found: list[str] = []
    try:
        with os.scandir(real) as it:
            for entry in it:
                hidden = entry.name.startswith(".") and not start.startswith(".")
                if hidden or not entry.name.startswith(start):
                    continue
                with contextlib.suppress(OSError):
                    if not entry.is_dir():
                        continue
                    target = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
                    if home is not None and inside(home, target):
                        continue
                    found.append(os.path.join(folder, entry.name))
    except OSError:  # not there (yet), not a folder, not readable: nothing to offer
        return FsCompleteResult(directories=[], truncated=False)
    found.sort()
    return FsCompleteResult(directories=found[:MAX_COMPLETIONS], truncated=len(found) > MAX_COMPLETIONS)

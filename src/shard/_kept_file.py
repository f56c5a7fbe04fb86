"""Files of compiled code kept between runs next to Shard's own bytecode (issue 31): the dataclass
methods (``_dataclass_code``) and the regular expressions (``_regex_code``) every start makes again.

A file gives code to run, so it is read only when this user (or root, for a system-wide install)
owns it and nobody else may write to it — the trust a ``.pyc`` in the same folder already has — and
never through a symbolic link; one whose header is not this Python's is ignored. It is written
whole or not at all (a process may be reading it), ``0644`` whatever the umask. Stdlib only, and
nothing at import.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing itself is not loaded yet at the first import of this module

if TYPE_CHECKING:
    from typing import Any


def cache_path(kind: str) -> str:
    """Where this Python's file of ``kind`` is kept: in Shard's ``__pycache__``."""
    tag = sys.implementation.cache_tag or "none"
    here = os.path.dirname(os.path.realpath(__file__))
    return os.path.join(here, "__pycache__", f"{kind}.{tag}.marshal")


def trusted(owner: int, mode: int, euid: int) -> bool:
    """Whether a file may give code to run: this user's (or root's: a system-wide install, whose
    code root could change anyway), and nobody else may write to it."""
    return owner in (euid, 0) and not mode & 0o022


def open_trusted(path: str) -> tuple[int, os.stat_result] | None:
    """``path`` opened for reading, never through a symbolic link, with its status: None when it
    is missing or not :func:`trusted` (the caller closes the descriptor)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not trusted(st.st_uid, st.st_mode, os.geteuid()):
        os.close(fd)
        return None
    return fd, st


def load(path: str, head: object) -> dict[Any, Any]:
    """The file's entries; none when it is missing, not :func:`trusted`, or its header is not
    ``head``."""
    opened = open_trusted(path)
    if opened is None:
        return {}
    fd = opened[0]
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read()
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        found, entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return {}
    if found != head or not isinstance(entries, dict):
        return {}
    return entries


def write(path: str, head: object, entries: dict[Any, Any]) -> bool:
    """Replace the file with ``entries``; False (and nothing changed) where it cannot be written."""
    try:
        data = marshal.dumps((head, entries))
    except ValueError:  # an entry marshal refuses
        return False
    return write_bytes(path, data)


def write_bytes(path: str, data: bytes) -> bool:
    """Replace the file with ``data``; False (and nothing changed) where it cannot be written."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o644)  # whatever the umask: a group-writable file would not be read
            with os.fdopen(fd, "wb", closefd=False) as f:
                f.write(data)
        finally:
            os.close(fd)
        os.replace(tmp, path)  # whole or not at all, for a process reading it now
    except OSError:  # a read-only install: it simply compiles
        try:  # noqa: SIM105 - not contextlib: this module loads before the kept imports are installed
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


def add(
    path: str,
    head: object,
    kept: dict[Any, Any],
    new: dict[Any, Any],
    *,
    limit: int | None = None,
    used: dict[Any, Any] | None = None,
) -> bool:
    """Write ``new`` merged with what the file holds now (another process may have written since);
    past ``limit`` entries, ``used`` alone (what this process took). Once written, ``new`` moves
    into ``kept``. Whether it wrote."""
    if not new:
        return False
    entries = {**load(path, head), **new}
    if limit is not None and used is not None and len(entries) > limit:
        entries = dict(used)
    if not write(path, head, entries):
        return False
    kept.update(new)
    new.clear()
    return True

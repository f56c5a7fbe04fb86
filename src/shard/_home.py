"""SHARD_HOME and the private files under it (stdlib only: start-up phase A and the daemon both use it).

Everything Shard keeps under SHARD_HOME — transcripts, grants, the agent registry, the daemon's
address — is the user's alone: the home is 0700, every directory Shard makes in it 0700 and every
file 0600. Modes are set explicitly rather than through the umask, which Shard never changes (the
files its tools create for the user keep the user's usual permissions).

``config.toml`` is the user's file and is never rewritten, but it decides where API keys are sent
(``base_url``), so one that another user owns or that group or others may write is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def shard_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--home`` beats ``$SHARD_HOME`` beats ``~/.shard``."""
    raw = explicit or os.environ.get("SHARD_HOME") or "~/.shard"
    return Path(raw).expanduser().resolve()


class HomeError(Exception):
    """SHARD_HOME or config.toml cannot be used safely; ``message`` is one line for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def prepare_home(home: Path) -> str | None:
    """Create SHARD_HOME 0700, or check an existing one: one owned by another user is refused
    (HomeError); one open to group or others is tightened and the returned notice says so."""
    try:
        st = os.stat(home)
    except FileNotFoundError:
        try:
            private_dirs(home)
        except OSError as exc:
            raise HomeError(f"cannot create SHARD_HOME {home}: {exc.strerror}") from None
        return None
    except OSError as exc:
        raise HomeError(f"cannot use SHARD_HOME {home}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise HomeError(f"SHARD_HOME {home} is not a directory")
    if st.st_uid != os.geteuid():
        raise HomeError(
            f"SHARD_HOME {home} belongs to another user (uid {st.st_uid}); "
            "use your own (--home or $SHARD_HOME)"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077 == 0:
        return None
    try:
        os.chmod(home, PRIVATE_DIR)
    except OSError as exc:
        raise HomeError(
            f"SHARD_HOME {home} is open to others ({mode:04o}) and cannot be made 0700: {exc.strerror}"
        ) from None
    return f"SHARD_HOME {home} was open to group or others ({mode:04o}); it is now 0700"


def private_dirs(path: Path) -> None:
    """``mkdir -p`` whose new directories are 0700 whatever the umask (existing ones are left as they
    are: above the home they are not Shard's)."""
    missing: list[Path] = []
    level = path
    while not os.path.lexists(level):
        missing.append(level)
        level = level.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR)
        except FileExistsError:
            continue  # made by a concurrent process meanwhile
        os.chmod(directory, PRIVATE_DIR)  # the umask may have taken bits from mkdir's mode


def open_private(path: Path, flags: int) -> int:
    """``os.open`` creating ``path`` 0600 (an existing file is made 0600 too), whatever the umask."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically with ``data``, through a 0600 temporary file beside it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # a full disk must not also leave a stray temporary file
            os.unlink(tmp)
        raise


def read_config(path: Path) -> bytes | None:
    """The bytes of ``config.toml`` (None when there is none), refused (HomeError) when another user
    owns it or group or others may write it. Checked on the open file, so what is checked is what is
    read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HomeError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.geteuid():
            raise HomeError(
                f"{path} belongs to another user (uid {st.st_uid}) and decides where API keys are "
                "sent; use a config.toml of your own"
            )
        if st.st_mode & 0o022:
            raise HomeError(
                f"{path} may be written by group or others ({stat.S_IMODE(st.st_mode):04o}) and decides "
                f"where API keys are sent; fix it with: chmod 600 {path}"
            )
        try:
            return f.read()
        except OSError as exc:
            raise HomeError(f"cannot read {path}: {exc.strerror}") from None

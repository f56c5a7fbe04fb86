"""Reading a text file's exact bytes and writing one back atomically: what write and edit share.

A file keeps what it was: its BOM, its line endings (CRLF stays CRLF) and its permission bits. A
write goes to a temporary file in the same directory and is renamed over the target, so a crash
leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from shard.agent.tools.base import ToolFailure

BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class TextFile:
    text: str  # decoded, BOM removed, line endings as in the file
    bom: bool
    newline: str  # "\r\n" when the file's lines end that way, else "\n"
    mode: int | None  # permission bits of an existing file


def load_text(path: Path, shown: str) -> TextFile:
    try:
        data = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        raise ToolFailure(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise ToolFailure(f"{shown} is a directory") from None
    except PermissionError:
        raise ToolFailure(f"{shown}: permission denied") from None
    if b"\0" in data[:8192]:
        raise ToolFailure(f"{shown} is a binary file; it cannot be edited as text")
    bom = data.startswith(BOM)
    if bom:
        data = data[len(BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{shown} is not UTF-8 text; it cannot be edited safely") from None
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
    return TextFile(text=text, bom=bom, newline=newline, mode=mode)


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temp file + rename (parents created as needed).

    A symlink is written through (its target changes, the link stays); a new file gets the usual
    permissions (0666 less the umask), an existing one keeps its own (``mode``).
    """
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.shard-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the kernel applies the umask
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise

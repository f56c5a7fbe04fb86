"""What a client may name inside an agent's folder, without touching the disk.

A path is relative to the agent's ``cwd`` and '/'-separated. Refused as INVALID_REQUEST before any
look at the disk: an absolute path, a ``..`` component (even one that would come back inside: the
tree never shows one, so no client needs it), a NUL byte. ``.`` and empty components are dropped.
``.git`` anywhere in the path is refused as PERMISSION_DENIED: the tree never shows it (it holds
the repository's objects, hooks and often credentials in ``config``).
"""

from __future__ import annotations

import os

from shard.protocol.errors import ErrorCode, ShardError, shown

HIDDEN_ALWAYS = ".git"


def parts_of(path: str) -> list[str]:
    """The components of ``path``; INVALID_REQUEST / PERMISSION_DENIED as the module says."""
    if "\0" in path:
        raise ShardError(ErrorCode.INVALID_REQUEST, "path holds a NUL byte")
    if path.startswith(("/", "~")):
        raise ShardError(
            ErrorCode.INVALID_REQUEST, f"path must be relative to the agent's folder, not {shown(path)}"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"path may not hold '..': {shown(path)}")
    if HIDDEN_ALWAYS in parts:
        raise ShardError(ErrorCode.PERMISSION_DENIED, f"{shown(path)} is inside .git, which is not shown")
    return parts


def inside(root: str, real: str) -> bool:
    """Whether the resolved path ``real`` is ``root`` or below it (both canonical)."""
    return real == root or real.startswith(root.rstrip("/") + "/")


def relative(root: str, real: str) -> list[str]:
    """The components of ``real`` below ``root`` (``real`` inside it)."""
    rest = real[len(root) :].lstrip("/") if real != root else ""
    return [p for p in rest.split("/") if p]


def completion_split(prefix: str) -> tuple[str, str]:
    """An absolute path being typed as (the folder to list, the start of the name typed in it);
    ``~`` is the daemon user's home. INVALID_REQUEST for a relative one: relative to what?"""
    if "\0" in prefix:
        raise ShardError(ErrorCode.INVALID_REQUEST, "prefix holds a NUL byte")
    expanded = os.path.expanduser(prefix)
    if not os.path.isabs(expanded):
        raise ShardError(ErrorCode.INVALID_REQUEST, f"prefix must be an absolute path, not {shown(prefix)}")
    folder, _, start = expanded.rpartition("/")
    return folder or "/", start

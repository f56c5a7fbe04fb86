"""Path handling shared by the tools and the gate: relative to the agent's cwd, checked for
containment on the real (symlink-resolved) path so a link cannot smuggle a path outside."""

from __future__ import annotations

import os
from pathlib import Path


def resolve(cwd: Path, raw: str) -> Path:
    """The absolute, normalized path a tool argument names (``~`` expanded, relative to ``cwd``)."""
    p = Path(os.path.expanduser(raw))
    if not p.is_absolute():
        p = cwd / p
    return Path(os.path.normpath(p))


def is_inside(cwd: Path, path: Path) -> bool:
    real_cwd = os.path.realpath(cwd)
    real = os.path.realpath(path)
    return real == real_cwd or real.startswith(real_cwd.rstrip(os.sep) + os.sep)


def display(cwd: Path, path: Path) -> str:
    """``path`` relative to ``cwd`` when inside it, else absolute: what renders and messages show."""
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else "."

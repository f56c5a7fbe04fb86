"""Path handling shared by the tools and the gate: relative to the agent's cwd, checked for
containment on the real (symlink-resolved) path so a link cannot smuggle a path outside.

Containment never looks outside: :func:`locate` resolves symlinks one component at a time and
stops at the first one that leads out of the roots, without a ``stat`` of anything beyond it — so
whether an outside path exists, or what it is, cannot change what the gate decides or shows before
the person has allowed the call.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

_MAX_LINKS = 40  # as the kernel's own limit on symlinks followed in one lookup


def resolve(cwd: Path, raw: str) -> Path:
    """The absolute, normalized path a tool argument names (``~`` expanded, relative to ``cwd``)."""
    p = Path(os.path.expanduser(raw))
    if not p.is_absolute():
        p = cwd / p
    return Path(os.path.normpath(p))


class Located(NamedTuple):
    path: Path  # symlinks resolved as far as the roots go; beyond them, the rest as written
    inside: bool


def locate(roots: Sequence[Path], path: Path) -> Located:
    """Where ``path`` really is, looking only inside ``roots`` (and at their own ancestors, which are
    known directories): each component inside is ``lstat``-ed and links are followed; the first
    component that lies outside ends the walk and the remainder is joined as written, unseen."""
    reals = [os.path.realpath(r) for r in roots]
    start = _onto_real(str(path), [str(r) for r in roots], reals)
    if start is None:
        return Located(path, False)  # outside as written: nothing to resolve, nothing looked at
    todo = list(Path(start).parts[1:])
    current = os.sep
    links = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        if not any(_under(candidate, r) for r in reals):
            if any(_under(r, candidate) for r in reals):
                current = candidate  # an ancestor of a root: a real directory, no need to look
                continue
            return Located(Path(os.path.normpath(os.path.join(candidate, *todo))), False)
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:  # missing (or unreadable): nothing below it can be a link
            current = os.path.join(candidate, *todo)
            break
        if stat.S_ISLNK(mode):
            links += 1
            if links > _MAX_LINKS:  # a loop inside the roots: opening it fails anyway
                current = os.path.join(candidate, *todo)
                break
            target = os.readlink(candidate)
            if os.path.isabs(target):
                current = os.sep
            todo = [*Path(target).parts[1 if os.path.isabs(target) else 0 :], *todo]
            continue
        current = candidate
    real = os.path.normpath(current)
    return Located(Path(real), any(_under(real, r) for r in reals))


def is_inside(cwd: Path, path: Path) -> bool:
    return locate([cwd], path).inside


def _onto_real(path: str, roots: list[str], reals: list[str]) -> str | None:
    """``path`` rewritten onto the real path of the root it lies under as written; None if none."""
    for root, real in zip(roots, reals, strict=True):
        if _under(path, real):
            return path
        if _under(path, root):
            return os.path.join(real, os.path.relpath(path, root))
    return None


def _under(path: str, root: str) -> bool:
    root = root.rstrip(os.sep) or os.sep
    return path == root or path.startswith(root if root == os.sep else root + os.sep)


def display(cwd: Path, path: Path) -> str:
    """``path`` relative to ``cwd`` when inside it, else absolute: what renders and messages show."""
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else "."

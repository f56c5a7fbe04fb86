"""Does a command's argument reach outside the working directory? — for ``bash_signature`` grants.

A signature grant leaves a command's other arguments free, but only inside the working directory:
a grant for ``cat notes.txt`` must not read ``cat /elsewhere/secret``. Each free argument (and each
file read by ``<``) is judged as a path: the word itself, the part after an ``=`` (``if=/etc/x``)
and the word without a leading ``@`` (``-d @/etc/x``). It reaches outside when it is absolute, starts
with ``~`` or climbs out with ``..`` to somewhere outside, goes through a link that leads outside, or
cannot be known before bash runs it (``$VAR``, a substitution). A glob is expanded here, inside the
working directory only, so a ``*`` that matches a link leading out counts too.

Only paths inside the roots are looked at (:func:`~shard.agent.tools.paths.locate`).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from shard.agent.tools.paths import locate, resolve

_UNKNOWABLE = ("$", "`", "<(", ">(")
_GLOB = ("*", "?", "[")
_MAX_GLOB_ENTRIES = 5000  # a glob that would take longer to judge counts as reaching out


def reaches_outside(roots: Sequence[Path], word: str) -> bool:
    cwd = roots[0]
    for candidate in _candidates(word):
        if any(u in candidate for u in _UNKNOWABLE):
            return True
        if any(g in candidate for g in _GLOB):
            if _glob_reaches_outside(roots, resolve(cwd, candidate)):
                return True
        elif not locate(roots, resolve(cwd, candidate)).inside:
            return True
    return False


def _candidates(word: str) -> list[str]:
    out = [word]
    if "=" in word:
        out.append(word.split("=", 1)[1])
    if word.startswith("@"):
        out.append(word[1:])
    return [c for c in out if c]


def _glob_reaches_outside(roots: Sequence[Path], pattern: Path) -> bool:
    """Expand ``pattern`` the way bash would, looking only inside the roots: True when its literal
    part lies outside, or when any match leads outside (a link) — or when there are too many."""
    parts = pattern.parts
    first = next(i for i, p in enumerate(parts) if any(g in p for g in _GLOB))
    base = locate(roots, Path(*parts[:first]))
    if not base.inside:
        return True
    budget = [_MAX_GLOB_ENTRIES]
    return _walk(roots, base.path, list(parts[first:]), budget)


def _walk(roots: Sequence[Path], directory: Path, rest: list[str], budget: list[int]) -> bool:
    head, tail = rest[0], rest[1:]
    if not any(g in head for g in _GLOB):
        return _step(roots, directory / head, tail, budget)
    try:
        with os.scandir(directory) as entries:
            names = [e.name for e in entries]
    except OSError:
        return False  # nothing there to match: bash passes the pattern on as written
    budget[0] -= len(names)
    if budget[0] < 0:
        return True
    hidden_ok = head.startswith(".")
    return any(
        _step(roots, directory / name, tail, budget)
        for name in names
        if fnmatch.fnmatchcase(name, head) and (hidden_ok or not name.startswith("."))
    )


def _step(roots: Sequence[Path], path: Path, tail: list[str], budget: list[int]) -> bool:
    where = locate(roots, path)
    if not where.inside:
        return True
    if not tail:
        return False
    try:
        is_dir = stat.S_ISDIR(os.stat(where.path).st_mode)  # inside, links already resolved
    except OSError:
        return False
    return is_dir and _walk(roots, where.path, tail, budget)

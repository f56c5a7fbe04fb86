"""The rewritten test modules cached once, before the xdist workers start.

Every worker imports every test module (xdist compares the workers' collections), and pytest
rewrites each module's asserts on import: about 8 s of CPU per worker for the ~400 modules. pytest
caches the result in ``__pycache__`` — unless PYTHONDONTWRITEBYTECODE is set (as .ci/run sets it),
and in a fresh clone the workers all start at once with nothing cached, so each of them did the
whole rewrite. Here the controller hands the stale modules to one ``pytest --collect-only`` a core,
with bytecode writing on; the workers then read what those wrote (pytest reads its cache even when
it may not write one). Only pytest's own ``*-pytest-*.pyc`` files are written, in the
``__pycache__`` folders git ignores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _cached(source: Path) -> Path:
    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}"
    return source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"


def stale_modules(roots: list[Path]) -> list[Path]:
    """The test modules and conftests under ``roots`` whose rewritten code is not cached (or is
    older than the source)."""
    found: set[Path] = set()
    for root in roots:
        candidates = [root] if root.is_file() else [*root.rglob("test_*.py"), *root.rglob("conftest.py")]
        for source in candidates:
            pyc = _cached(source)
            if not pyc.exists() or pyc.stat().st_mtime < source.stat().st_mtime:
                found.add(source)
    return sorted(found)


def shares(paths: list[Path], parts: int) -> list[list[Path]]:
    """``paths`` in ``parts`` groups of about the same bytes of source (the rewrite's cost)."""
    groups: list[list[Path]] = [[] for _ in range(max(1, parts))]
    sizes = [0] * len(groups)
    for path in sorted(paths, key=lambda p: p.stat().st_size, reverse=True):
        least = sizes.index(min(sizes))
        groups[least].append(path)
        sizes[least] += path.stat().st_size
    return [group for group in groups if group]


def precompile(rootdir: Path, roots: list[Path]) -> None:
    """Rewrite and cache the stale test modules under ``roots``, one process a core."""
    if sys.pycache_prefix:  # the cache lives elsewhere: pytest's own caching is left alone
        return
    stale = stale_modules(roots)
    if not stale:
        return
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "no:xdist"]
    running = [
        subprocess.Popen(
            [*command, *map(str, group)],
            cwd=rootdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for group in shares(stale, os.cpu_count() or 1)
    ]
    for proc in running:  # a module that fails to import fails again, with its error, in the run
        proc.wait()

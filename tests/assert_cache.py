"""The rewritten test modules cached once, before the xdist workers start.

Every worker imports every test module (xdist compares the workers' collections), and pytest
rewrites each module's asserts on import: about 8 s of CPU per worker for the ~400 modules. pytest
caches the result in ``__pycache__`` — unless PYTHONDONTWRITEBYTECODE is set (as .ci/run sets it),
and in a fresh clone the workers all start at once with nothing cached, so each of them did the
whole rewrite. Here the controller hands the stale modules to one process a core, which rewrites
them with pytest's own rewriter and writes pytest's own cache files — without importing them: a
``pytest --collect-only`` did the same at three times the CPU, most of it running the modules'
imports. The workers then read what was written (pytest reads its cache even when it may not
write one; a module whose cache is missing or wrong is simply rewritten again by the worker). Only
pytest's own ``*-pytest-*.pyc`` files are written, in the ``__pycache__`` folders git ignores."""

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


def precompile(rootdir: Path, roots: list[Path], *, pass_hook: bool = False) -> None:
    """Rewrite and cache the stale test modules under ``roots``, one process a core
    (``pass_hook``: the ``enable_assertion_pass_hook`` ini setting the rewrite depends on)."""
    if sys.pycache_prefix:  # the cache lives elsewhere: pytest's own caching is left alone
        return
    stale = stale_modules(roots)
    if not stale:
        return
    command = [sys.executable, str(Path(__file__).resolve()), *(["--pass-hook"] if pass_hook else [])]
    running = [
        subprocess.Popen(
            [*command, *map(str, group)],
            cwd=rootdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for group in shares(stale, os.cpu_count() or 1)
    ]
    for proc in running:  # a module that fails to parse fails again, with its error, in the run
        proc.wait()


def rewrite_into_cache(sources: list[Path], *, pass_hook: bool) -> None:
    """pytest's rewrite of each source, written where and as pytest writes it (atomically: a worker
    may read it as soon as it is there)."""
    import ast
    import importlib.util

    from _pytest.assertion import rewrite

    class _Ini:  # the one setting the rewriter reads from pytest's Config
        def getini(self, name: str) -> object:
            assert name == "enable_assertion_pass_hook", name
            return pass_hook

    for source in sources:
        try:
            text = source.read_bytes()
            tree = ast.parse(text, filename=str(source))
            rewrite.rewrite_asserts(tree, text, str(source), _Ini())  # type: ignore[arg-type]
            code = compile(tree, str(source), "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            continue
        pyc = _cached(source)
        pyc.parent.mkdir(exist_ok=True)
        partial = pyc.with_name(f"{pyc.name}.{os.getpid()}")
        with open(partial, "wb") as out:
            rewrite._write_pyc_fp(out, importlib.util.source_hash(text), code)
        os.replace(partial, pyc)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    hook = arguments[:1] == ["--pass-hook"]
    rewrite_into_cache([Path(arg) for arg in arguments[hook:]], pass_hook=hook)

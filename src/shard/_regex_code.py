"""Compiled regular expressions, kept between runs (issue 31).

Every start compiles the same ~60 patterns at import — the standard library's (``platform``,
``tomllib``, ``textwrap``, ``logging``, ``json``…) and Shard's own — in ``re``'s pure-Python
parser and compiler: ~9 ms of a one-shot's CPU, as much of the daemon's and the template's. What
that compiler hands to ``_sre.compile`` (flags, code, groups) depends only on the pattern, its
flags and this Python, so it is kept like a ``.pyc``: in Shard's ``__pycache__`` (``_kept_file``:
its trust rules), keyed by the exact pattern and flags, the header naming this Python and its
``_sre``. :func:`install` puts :func:`KeptPatterns.compile` in place of ``re._compiler.compile``,
which ``re`` calls only for a pattern not in its own cache: a kept pattern goes straight to
``_sre.compile`` (which checks the code it is given), anything else compiles as before.

Only ``python -m shard.cli.warm_cache`` records (``scripts/bootstrap.sh`` runs it): the patterns
Shard's start paths compile at import, the library's constants. A running process never writes the
file — some patterns are the user's or the model's (a search) and stay in memory only.
"""

from __future__ import annotations

import sys
from typing import Any

from shard import _kept_file

_VERSION = 1
_DEBUG = 128  # re.DEBUG: prints as it compiles, so never taken from the file

Entry = tuple[int, list[int], int, dict[str, int], tuple[Any, ...]]


class _Recorder:
    """Stands for ``_sre`` inside ``re._compiler`` while recording: keeps the arguments of its
    ``compile``, the last step of compiling a pattern."""

    def __init__(self, sre: Any) -> None:
        self.sre = sre
        self.last: tuple[Any, ...] | None = None

    def compile(self, *args: Any) -> Any:
        self.last = args
        return self.sre.compile(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sre, name)


class KeptPatterns:
    """The patterns of one file, compiled from their kept code; when recording, what this process
    compiles is added."""

    def __init__(self, path: str, original: Any, sre: Any, *, record: bool = False) -> None:
        self.path = path
        self.kept: dict[tuple[str | bytes, int], Entry] = _kept_file.load(path, _head(sre))
        self.new: dict[tuple[str | bytes, int], Entry] = {}
        self.hits = 0
        self.misses = 0
        self._original = original
        self._sre = sre
        self._recorder = _Recorder(sre) if record else None

    def compile(self, pattern: Any, flags: int = 0) -> Any:
        """What ``re._compiler.compile`` returns, from the kept code when there is one."""
        kind = type(pattern)
        if (kind is not str and kind is not bytes) or flags & _DEBUG:
            return self._original(pattern, flags)
        key = (pattern, int(flags))
        entry = self.kept.get(key)
        if entry is not None:
            try:
                compiled = self._sre.compile(pattern, *entry)
            except (TypeError, ValueError, RuntimeError, OverflowError):  # not code _sre accepts
                pass
            else:
                self.hits += 1
                return compiled
        self.misses += 1
        if self._recorder is None:
            return self._original(pattern, flags)
        self._recorder.last = None
        compiled = self._original(pattern, flags)
        args = self._recorder.last
        if args is not None and args[0] is pattern:
            final, code, groups, index, names = args[1:]
            self.new[key] = (int(final), [int(op) for op in code], int(groups), dict(index), tuple(names))
        return compiled

    def save(self) -> bool:
        """Write what was recorded, merged with what the file holds now. Whether it wrote."""
        return _kept_file.add(self.path, _head(self._sre), self.kept, self.new)


def _head(sre: Any) -> tuple[int, int, int, int]:
    return _VERSION, sys.hexversion, sre.MAGIC, sre.CODESIZE


_installed: KeptPatterns | None = None


def cache_path() -> str:
    return _kept_file.cache_path("regex-code")


def install(path: str | None = None, *, record: bool = False) -> None:
    """Compile patterns from kept code (once per process; a fork keeps it); ``record``: keep what
    this process compiles, for :func:`save` (``warm_cache`` only)."""
    global _installed
    if _installed is not None:
        return
    import _sre
    from re import _compiler

    _installed = KeptPatterns(path or cache_path(), _compiler.compile, _sre, record=record)
    _compiler.compile = _installed.compile
    if _installed._recorder is not None:
        _compiler._sre = _installed._recorder  # type: ignore[attr-defined]


def counts() -> tuple[int, int]:
    """(patterns compiled from kept code, patterns compiled) in this process so far."""
    return (0, 0) if _installed is None else (_installed.hits, _installed.misses)


def save() -> bool:
    """:meth:`KeptPatterns.save` of the installed file (``warm_cache``)."""
    return _installed is not None and _installed.save()

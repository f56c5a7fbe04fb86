"""Compiled dataclass methods and forward references, kept between runs (issue 31).

Python 3.11 writes each dataclass's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``, ``__delattr__``, ``__hash__``) as source text and ``exec``s it: about 450 compiles
for the ~100 dataclasses a runtime defines, pydantic's own included, some 50 ms of every daemon,
template and ``shard run`` start (a third of their imports' CPU after pydantic itself). The text
depends only on the class, so the code compiled from it is kept like a module's ``.pyc``: in the
package's ``__pycache__``, keyed by the exact text, so an entry is used only for the very source it
was compiled from and a changed class simply compiles again.

:func:`install` shadows ``exec`` inside the ``dataclasses`` module only (a module global there, found
before the builtin); that ``exec`` looks the text up and runs the kept code in the same globals and
namespace, else compiles it as ``exec`` would (``"<string>"``, no inherited ``__future__`` flags).
Nothing of dataclasses' own logic is copied, so a later Python that still ``exec``s text gains the
same way, and one that does not simply never calls it.

``typing.ForwardRef`` compiles its string the same way, once per annotation: ``pydantic_core``'s
~90 ``TypedDict`` classes alone make ~820 of them (``from __future__ import annotations``), ~7 ms
of every start. So ``compile`` is shadowed inside ``typing`` too: an expression (``"<string>"``,
``"eval"``) seen before is taken from the file, anything else compiles as ``compile`` would. And
``eval`` inside ``collections``, where each ``namedtuple`` (~40 at a start) evaluates the text of
its ``__new__``.

The file is read only when this user (or root, for a system-wide install) owns it and nobody else
may write to it (the trust a ``.pyc`` there already has: ``_kept_file``); a file that does not load
as this Python's is ignored. New entries are written when the process leaves (``_leaving``: a
``shard`` process ends with ``os._exit``, past ``atexit``), as Python writes bytecode: not under
``PYTHONDONTWRITEBYTECODE`` (``-B``), unless :func:`save` is told to
(``scripts/bootstrap.sh`` builds it for the start paths, ``python -m shard.cli.warm_cache``).
Stdlib only, and nothing at import.
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import sys
from typing import Any

from shard import _kept_file, _leaving

_MAX_ENTRIES = 4000  # a file that would grow past this keeps only what this process used
_VERSION = 2
_EVAL = "\0eval\0"  # the key of an expression: no dataclass text starts so


class KeptCode:
    """The texts of one file, run from their kept code; what this process compiles is added."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.kept: dict[str, bytes] = load(path)
        self.used: dict[str, bytes] = {}
        self.new: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """What ``exec`` does, with the code of a text seen before taken from the file."""
        if not isinstance(source, str):
            builtins.exec(source, globals, locals)
            return
        builtins.exec(self._code(source, source, "exec"), globals, locals)

    def compile(self, source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
        """What ``compile`` does; a ``ForwardRef``'s expression (``"<string>"``, ``"eval"``, nothing
        more) taken from the file."""
        if args or kwargs or filename != "<string>" or mode != "eval" or not isinstance(source, str):
            return builtins.compile(source, filename, mode, *args, **kwargs)
        return self._code(_EVAL + source, source, "eval")

    def eval(self, source: Any, globals: Any = None, locals: Any = None, /) -> Any:
        """What ``eval`` does, with the code of an expression seen before taken from the file (the
        same entries as :meth:`compile`'s: the same text compiles to the same code)."""
        if not isinstance(source, str):
            return builtins.eval(source, globals, locals)
        return builtins.eval(self._code(_EVAL + source, source, "eval"), globals, locals)

    def _code(self, key: str, source: str, mode: str) -> Any:
        data = self.kept.get(key)
        code = None
        if data is not None:
            with contextlib.suppress(EOFError, ValueError, TypeError):
                code = marshal.loads(data)
        if code is None:
            self.misses += 1
            code = builtins.compile(source, "<string>", mode, dont_inherit=True)
            data = marshal.dumps(code)
            if not self.new and self is _installed:
                _leaving.on_leaving(save)  # every shard process leaves through it (os._exit)
            self.new[key] = data
        else:
            self.hits += 1
        self.used[key] = data
        return code

    def save(self, *, force: bool = False) -> bool:
        """Write what this process compiled, merged with what the file holds now (another process
        may have written since); never under ``-B``/``PYTHONDONTWRITEBYTECODE`` unless ``force``.
        Whether it wrote."""
        if sys.dont_write_bytecode and not force:
            return False
        return _kept_file.add(self.path, _head(), self.kept, self.new, limit=_MAX_ENTRIES, used=self.used)


_installed: KeptCode | None = None


def cache_path() -> str:
    """Where this Python's entries are kept: next to Shard's own bytecode."""
    return _kept_file.cache_path("dataclass-code")


def _head() -> tuple[int, bytes]:
    from importlib import _bootstrap_external  # frozen, always loaded (importlib.util costs ~6 ms)

    return _VERSION, _bootstrap_external.MAGIC_NUMBER


def load(path: str) -> dict[str, bytes]:
    """The file's entries (``_kept_file.load``: none when it is missing, not trusted, or not this
    Python's)."""
    return _kept_file.load(path, _head())


def install(path: str | None = None) -> None:
    """Make ``dataclasses``, ``typing`` and ``collections`` run kept code (once per process; a fork
    keeps it)."""
    global _installed
    if _installed is not None:
        return
    import collections
    import dataclasses
    import typing

    _installed = KeptCode(path or cache_path())
    dataclasses.exec = _installed.exec  # type: ignore[attr-defined]
    typing.compile = _installed.compile  # type: ignore[attr-defined]
    collections.eval = _installed.eval  # type: ignore[attr-defined]


def counts() -> tuple[int, int]:
    """(texts run from kept code, texts compiled) in this process so far."""
    return (0, 0) if _installed is None else (_installed.hits, _installed.misses)


def save(*, force: bool = False) -> bool:
    """:meth:`KeptCode.save` of the installed file (at exit, and ``warm_cache``)."""
    return _installed is not None and _installed.save(force=force)

"""``python -m shard.cli.warm_cache``: compile the dataclass methods (``shard._dataclass_code``) and
the regular expressions (``shard._regex_code``) of Shard's start paths once and keep them, even under
``PYTHONDONTWRITEBYTECODE`` — run by ``scripts/bootstrap.sh`` after it byte-compiles the sources, as
an editable install ships no bytecode. ``shard.cli.main`` and the template install both.

The paths: the warm template's imports (a runtime forked from it defines nothing more), the daemon's,
and a direct ``shard run``'s, and what those compile at a first use (:func:`_first_uses`). Imported
only once both are installed, so that every pattern they compile is recorded. Prints how many of
each it compiled and kept.
"""

from __future__ import annotations

import importlib
import sys

from shard import _dataclass_code, _kept_imports, _regex_code, _schema_code


def start_paths() -> tuple[str, ...]:
    from shard.daemon.early_template import TEMPLATE_IMPORTS

    return (
        *TEMPLATE_IMPORTS,
        "shard.cli.daemon",
        "shard.cli.daemon_serve",
        "shard.daemon.server",
        "shard.cli.run",
    )


def _first_uses() -> None:
    """What those paths compile or import at their first use rather than at import: argparse's
    patterns as it parses a line, the IDNA codec's as asyncio resolves a host, ``ctypes`` as the
    keys are scrubbed from memory, asyncio's default thread pool."""
    for name in ("ctypes", "concurrent.futures.thread"):
        importlib.import_module(name)
    from shard.cli.parser import build_parser

    for line in (
        ["run", "x", "--model", "p/m"],
        ["agent", "--stdio", "--cwd", "/"],
        ["daemon", "--port", "0"],
    ):
        build_parser(line[0]).parse_args(line)
    "localhost".encode("idna")


def _build_models() -> None:
    """Every protocol model a process may build at its first use, built now (and so kept)."""
    import pydantic

    pending = [pydantic.BaseModel]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.startswith("shard.protocol.") and not model.__pydantic_complete__:
            model.model_rebuild(raise_errors=False)


def main(imports: str | None = None) -> int:
    """Build every file; ``imports``: where the kept imports go (Shard's ``__pycache__``)."""
    _regex_code.install(record=True)
    _dataclass_code.install()
    _schema_code.install()
    for name in start_paths():
        importlib.import_module(name)
    _first_uses()
    _build_models()
    hits, misses = _dataclass_code.counts()
    wrote = _dataclass_code.save(force=True)
    kept = " and kept" if wrote else ""
    print(f"shard: {hits + misses} dataclass methods and forward references, {misses} compiled{kept}")
    hits, misses = _regex_code.counts()
    wrote = _regex_code.save()
    print(f"shard: {hits + misses} patterns, {misses} compiled" + (" and kept" if wrote else ""))
    hits, misses = _schema_code.counts()
    wrote = _schema_code.save(force=True)
    print(f"shard: {hits + misses} model schemas, {misses} generated" + (" and kept" if wrote else ""))
    held = _kept_imports.record(imports or _kept_imports.cache_path(), list(sys.modules))
    print(f"shard: {held} modules to be found and read from one file")
    return 0


if __name__ == "__main__":
    sys.exit(main())

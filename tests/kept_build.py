"""What ``python -m shard.cli.warm_cache`` keeps, built and checked in fresh interpreters with files of
their own (none written into Shard's ``__pycache__``): shared by ``test_dataclass_code``,
``test_regex_code`` and ``test_schema_code``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def build(folder: Path) -> tuple[str, str, str]:
    """(the kept code's file, the patterns' file, what warm_cache printed); the model schemas and
    the kept imports go to ``schemas.marshal`` and ``imports.marshal`` in ``folder``."""
    kept, patterns = str(folder / "kept.marshal"), str(folder / "patterns.marshal")
    schemas, imports = str(folder / "schemas.marshal"), str(folder / "imports.marshal")
    script = textwrap.dedent(
        f"""
        from shard import _dataclass_code, _regex_code, _schema_code
        _regex_code.install({patterns!r}, record=True)
        _dataclass_code.install({kept!r})
        _schema_code.install({schemas!r})
        from shard.cli import warm_cache
        raise SystemExit(warm_cache.main({imports!r}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return kept, patterns, done.stdout


def compiled(printed: str, what: str) -> int:
    """How many ``what`` (``"dataclass methods"``, ``"patterns"``, ``"model schemas"``) warm_cache
    compiled (or generated) and kept."""
    line = next(line for line in printed.splitlines() if what in line)
    assert line.endswith(" and kept"), printed
    return int(line.split(", ")[1].split()[0])


def counts_on_the_start_paths(module: str, path: str) -> tuple[int, int]:
    """``shard.<module>.counts()`` once the start paths are imported and their first uses done, with
    ``path`` installed first."""
    script = textwrap.dedent(
        f"""
        import importlib
        from shard import {module}
        {module}.install({path!r})
        from shard.cli import warm_cache
        for name in warm_cache.start_paths():
            importlib.import_module(name)
        warm_cache._first_uses()
        print(*{module}.counts())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    hits, misses = map(int, done.stdout.split())
    return hits, misses


def printed_once_shard_starts(expression: str) -> str:
    """What ``expression`` is in a fresh interpreter once ``shard.cli.main`` (every ``shard``
    command's start) is imported."""
    script = f"import shard.cli.main\nprint({expression})"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def installed_before_the_templates_imports(call: str) -> bool:
    """Whether the template (``cli/forkserver.py``) makes ``call`` before it imports the runtime."""
    source = (Path(__file__).parents[1] / "src" / "shard" / "cli" / "forkserver.py").read_text()
    return source.index(call) < source.index("later = _preload(")

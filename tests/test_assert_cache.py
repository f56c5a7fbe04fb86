"""What the xdist controller hands to the precompile processes (tests/assert_cache.py): the test
modules and conftests without a fresh cached rewrite, split by size; and what those write: pytest's
own rewrite, which pytest then reads instead of rewriting, made without importing the module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assert_cache import precompile, shares, stale_modules


def _cache(source: Path) -> Path:
    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}"
    pyc = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(b"")
    return pyc


def test_only_test_modules_and_conftests_without_a_fresh_cache_are_stale(tmp_path: Path):
    for name in ("test_a.py", "test_b.py", "test_c.py", "conftest.py", "helpers.py"):
        (tmp_path / name).write_text("x = 1\n")
    _cache(tmp_path / "test_a.py")
    old = _cache(tmp_path / "test_b.py")
    os.utime(old, (1, 1))  # cached before its source changed
    stale = [tmp_path / name for name in ("conftest.py", "test_b.py", "test_c.py")]
    assert stale_modules([tmp_path]) == stale
    assert stale_modules([tmp_path / "test_a.py"]) == []


def test_shares_split_the_bytes_evenly_and_drop_empty_groups(tmp_path: Path):
    sizes = {"test_big.py": 900, "test_mid.py": 500, "test_small.py": 400, "test_tiny.py": 100}
    for name, size in sizes.items():
        (tmp_path / name).write_text("#" * size)
    groups = shares(sorted(tmp_path.iterdir()), 2)
    assert sorted(sum(sizes[p.name] for p in group) for group in groups) == [900, 1000]
    assert len(shares([tmp_path / "test_big.py"], 4)) == 1


def test_precompile_writes_the_rewritten_module_pytest_reads(tmp_path: Path, monkeypatch):
    (tmp_path / "test_one.py").write_text("def test_it():\n    assert 1 + 1 == 2\n")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as .ci/run sets it: written all the same
    precompile(tmp_path, [tmp_path])
    assert stale_modules([tmp_path]) == []


def test_the_cache_is_pytests_own_rewrite_made_without_importing_the_module(tmp_path: Path):
    """The module is never run by the precompile (its import would leave a file); pytest, with
    bytecode writing off as in .ci/run, then finds the cached rewrite, uses it (its debug trace
    says so) and reports a failing assert with the rewritten introspection."""
    marker = tmp_path / "imported"
    (tmp_path / "test_one.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).touch()\n\n"
        "def test_it():\n    left = [1, 2]\n    assert left == [1, 3]\n"
    )
    precompile(tmp_path, [tmp_path])
    assert stale_modules([tmp_path]) == []
    assert not marker.exists()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--debug=trace.log", "test_one.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert run.returncode == 1, run.stdout
    assert "At index 1 diff: 2 != 3" in run.stdout
    trace = (tmp_path / "trace.log").read_text()
    assert f"found cached rewritten pyc for {tmp_path / 'test_one.py'}" in trace
    assert f"rewriting {tmp_path / 'test_one.py'!r}" not in trace

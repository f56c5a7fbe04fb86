"""``find`` on ripgrep: the file-name part of the glob is handed to ripgrep as a file type, so rg
lists candidates only (it used to list every path for Python to filter). ripgrep applies types
after its ignore rules (``--glob`` would override them), and the whole glob is still checked in
Python: the results equal the pure-Python walk's on a tree with ignore rules at several levels,
negations, hidden files and info/exclude."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.tools.search import find_files, rg_name_filter

from .test_search_parity import VARIED, VARIED_LINKS, build, git_init, isolated_git_config

__all__ = ["isolated_git_config"]  # the autouse fixture: rg and git see no user-wide excludes

# Each is handed to ripgrep (checked below), and each keeps some file and drops another.
PUSHED = [
    "*.txt",
    "*.log",
    "!*.log",
    "*.md",
    "!*.md",
    "*.{md,log}",
    "!*.{txt,md}",
    "**/*.txt",
    "sub/*.log",
    "sub/**/*.md",
    "keep.log",
    "b.log",
    "*",
    "*only*",
    ".git*",
    ".env",
    "*.b",
]
KEPT_IN_PYTHON = ["sub/**", "[AB]*", "?", "*:*", "fïlé.txt", "!sub/*.log", "{a,sub}/*.txt", "x{a,{b}}"]


@pytest.fixture
def ignoring(tmp_path: Path) -> Path:
    root = build(tmp_path / "proj", VARIED, VARIED_LINKS)
    git_init(root, exclude="*.excluded\n")
    return root


@pytest.mark.parametrize("pattern", PUSHED + KEPT_IN_PYTHON)
async def test_rg_filtered_find_equals_the_python_walk(ignoring: Path, pattern: str) -> None:
    rg = await find_files(ignoring, pattern, 10_000, engine="rg")
    py = await find_files(ignoring, pattern, 10_000, engine="python")
    assert rg == py


async def test_the_patterns_test_something(ignoring: Path) -> None:
    """Every pushed pattern narrows the listing without emptying it, and none brings back an ignored
    file (``a.log``, ``sub/x.md``, ``.git/``)."""
    everything = await find_files(ignoring, None, 10_000, engine="python")
    for pattern in PUSHED:
        got = await find_files(ignoring, pattern, 10_000, engine="rg")
        assert got, pattern
        assert pattern == "*" or len(got) < len(everything), pattern
        assert not {"a.log", "sub/x.md"} & set(got), pattern
        assert not any(p.startswith(".git/") for p in got), pattern


@pytest.mark.parametrize("pattern", PUSHED)
def test_plain_name_globs_go_to_ripgrep(pattern: str) -> None:
    args = rg_name_filter(pattern)
    assert args[:1] == ["--type-add"]
    assert args[1] == "shardglob:" + pattern.lstrip("!").rpartition("/")[2]
    assert args[2:] == ["-T" if pattern.startswith("!") else "-t", "shardglob"]


@pytest.mark.parametrize("pattern", [*KEPT_IN_PYTHON, None, "", "src/", "a**b"])
def test_other_globs_stay_in_python(pattern: str | None) -> None:
    """Character classes, ``?`` (a byte here, a character in ripgrep), non-ASCII names, ``**`` as
    the name, braces across ``/`` or nested, a negated path: ripgrep gets no filter."""
    assert rg_name_filter(pattern) == []

"""``permissions/reach``: does a free argument of a granted command reach outside the cwd?"""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.permissions.reach import reaches_outside


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a")
    (root / "notes.txt").write_text("n")
    (tmp_path / "secret").write_text("s")
    return root


@pytest.mark.parametrize(
    "word",
    [
        "notes.txt",
        "src/a.py",
        "src/*.py",
        "*.txt",
        "missing.txt",
        "src/../notes.txt",
        "https://example.com/x",
    ],
)
def test_arguments_inside_stay_inside(cwd, word):
    """Checks plain names, globs that match only files inside, and URLs are inside."""
    assert not reaches_outside([cwd], word)


@pytest.mark.parametrize(
    "word",
    [
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "../secret",
        "src/../../secret",
        "$HOME/x",
        "`pwd`/x",
        "if=/etc/x",
        "@/etc/x",
    ],
)
def test_arguments_that_name_outside_reach_outside(cwd, word):
    """Checks absolute, home, climbing and unknowable (expansions) arguments count as outside."""
    assert reaches_outside([cwd], word)


def test_a_link_or_a_glob_that_matches_a_link_reaches_outside(cwd):
    """Checks that a link inside that leads out counts, named directly or matched by a glob."""
    (cwd / "src" / "leak").symlink_to(cwd.parent / "secret")
    assert reaches_outside([cwd], "src/leak")
    assert reaches_outside([cwd], "src/*")
    assert reaches_outside([cwd], "*/leak")
    assert not reaches_outside([cwd], "src/*.py")


def test_a_glob_below_a_linked_folder_reaches_outside_without_listing_it(cwd, tmp_path):
    """Checks that a glob through a link to an outside folder counts — decided at the link."""
    (tmp_path / "other").mkdir()
    (cwd / "vendor").symlink_to(tmp_path / "other")
    assert reaches_outside([cwd], "vendor/*.py")

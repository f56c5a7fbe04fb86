"""``tools/paths.locate``: symlink-aware containment that never looks outside the roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shard.agent.tools import paths
from shard.agent.tools.paths import display, is_inside, locate, resolve


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    cwd, out = tmp_path / "proj", tmp_path / "out"
    cwd.mkdir()
    out.mkdir()
    (out / "secret").write_text("s")
    (cwd / "src").mkdir()
    (cwd / "src" / "a.py").write_text("a")
    (cwd / "escape").symlink_to(out / "secret")
    (cwd / "vendor").symlink_to("../out")
    (cwd / "alias").symlink_to("src")
    (cwd / "abs_alias").symlink_to(cwd / "src")
    (cwd / "loop").symlink_to("loop")
    return cwd, out


@pytest.mark.parametrize(
    ("raw", "where", "inside"),
    [
        ("src/a.py", "{cwd}/src/a.py", True),
        ("not/yet/here.txt", "{cwd}/not/yet/here.txt", True),
        ("alias/a.py", "{cwd}/src/a.py", True),
        ("abs_alias/a.py", "{cwd}/src/a.py", True),
        ("escape", "{out}/secret", False),
        ("vendor/secret", "{out}/secret", False),
        ("vendor/deeper/none", "{out}/deeper/none", False),
        ("{out}/secret", "{out}/secret", False),
        ("src/../../out/secret", "{out}/secret", False),
        ("loop", "{cwd}/loop", True),
        (".", "{cwd}", True),
    ],
)
def test_locate_resolves_links_and_tells_inside_from_outside(tree, raw, where, inside):
    """Checks where a path really leads and whether that is inside the working directory."""
    cwd, out = tree
    path = paths.resolve(cwd, raw.format(cwd=cwd, out=out))
    found = locate([cwd], path)
    assert found.path == Path(where.format(cwd=cwd, out=out))
    assert found.inside is inside


@pytest.mark.parametrize("raw", ["escape", "vendor/secret", "vendor/a/b/c", "{out}/secret", "{out}"])
def test_locate_never_looks_at_anything_outside(tree, raw, monkeypatch):
    """Checks that every lstat/readlink locate makes is of a path inside the root: an outside
    target is named without being looked at, so its existence cannot change the answer."""
    cwd, out = tree
    looked: list[str] = []
    real_lstat, real_readlink = os.lstat, os.readlink

    def lstat(p, *a, **k):
        looked.append(str(p))
        return real_lstat(p, *a, **k)

    def readlink(p, *a, **k):
        looked.append(str(p))
        return real_readlink(p, *a, **k)

    monkeypatch.setattr(paths.os, "lstat", lstat)
    monkeypatch.setattr(paths.os, "readlink", readlink)
    found = locate([cwd], paths.resolve(cwd, raw.format(out=out)))
    assert not found.inside
    ancestors = {str(a) for a in cwd.parents}  # realpath of the root itself walks these
    assert all(p in ancestors or p == str(cwd) or p.startswith(f"{cwd}{os.sep}") for p in looked), looked
    assert not any(p.startswith(str(out)) for p in looked)


def test_a_root_reached_through_a_link_is_still_inside(tmp_path: Path):
    """Checks that a cwd given through a link (as a user's shell may name it) contains its files."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    found = locate([tmp_path / "via"], tmp_path / "via" / "f.txt")
    assert found == (real / "f.txt", True)


def test_the_second_root_counts(tmp_path: Path):
    """Checks that a path inside any of the roots (the spill folder) is inside."""
    cwd, spill = tmp_path / "proj", tmp_path / "spill"
    cwd.mkdir()
    spill.mkdir()
    assert locate([cwd, spill], spill / "x.log").inside
    assert not locate([cwd], spill / "x.log").inside


def test_path_helpers(tmp_path: Path) -> None:
    """Checks resolve (relative to cwd, normalized, ~ expanded), is_inside and display."""
    home = Path(os.path.expanduser("~"))
    assert resolve(tmp_path, "a/./b/../c") == tmp_path / "a" / "c"
    assert resolve(tmp_path, "/etc//hosts") == Path("/etc/hosts")
    assert resolve(tmp_path, "~/x") == home / "x"
    assert is_inside(tmp_path, tmp_path)
    assert is_inside(tmp_path, tmp_path / "deep" / "er")
    assert not is_inside(tmp_path, tmp_path.parent)
    assert not is_inside(tmp_path, Path("/"))
    assert display(tmp_path, tmp_path) == "."
    assert display(tmp_path, tmp_path / "a" / "b") == "a/b"
    assert display(tmp_path / "x", tmp_path / "y") == str(tmp_path / "y")

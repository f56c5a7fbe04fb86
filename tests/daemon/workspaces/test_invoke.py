"""``invoke``: whatever the subcommand, the daemon's git runs none of the programs a repository's
configuration names. The workspace commands never diff or merge; these pin the drivers they would
reach, so a later caller of ``invoke`` cannot bring them back (the workspace commands themselves are
tested in tests/security/test_daemon_git_runs_nothing.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from shard.daemon.workspaces import invoke
from workspaces.conftest import commit
from workspaces.conftest import git as run_git


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / ".gitattributes").write_text("*.txt filter=pwn diff=pwn merge=pwn\n")
    commit(repo, "a.txt", "tracked\n")
    run_git(repo, "add", ".gitattributes")
    run_git(repo, "commit", "-q", "-m", "attributes")
    return repo


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran"


def _touch(marker: Path) -> str:
    return f"touch {shlex.quote(str(marker))}"


def _diff(project: Path) -> None:
    invoke.run(["-C", str(project), "diff", "HEAD"], repository=str(project / ".git"))


def test_a_textconv_never_runs(project: Path, marker: Path):
    (project / "a.txt").write_text("changed\n")
    run_git(project, "config", "diff.pwn.textconv", f"{_touch(marker)}; cat")
    _diff(project)
    assert not marker.exists()


def test_a_diff_drivers_command_never_runs(project: Path, marker: Path):
    (project / "a.txt").write_text("changed\n")
    run_git(project, "config", "diff.pwn.command", _touch(marker))
    _diff(project)
    assert not marker.exists()


def test_an_external_diff_never_runs(project: Path, marker: Path):
    (project / "a.txt").write_text("changed\n")
    run_git(project, "config", "diff.external", _touch(marker))
    _diff(project)
    assert not marker.exists()


def test_a_merge_driver_never_runs(project: Path, marker: Path):
    run_git(project, "branch", "other")
    commit(project, "a.txt", "ours\n")
    run_git(project, "checkout", "-q", "other")
    commit(project, "a.txt", "theirs\n")
    run_git(project, "config", "merge.pwn.driver", f"{_touch(marker)}; false")
    merge = ["-C", str(project), "merge-tree", "--write-tree", "main", "other"]
    invoke.run(merge, repository=str(project / ".git"))
    assert not marker.exists()


def test_a_driver_whose_name_has_dots_and_an_equals_sign_is_pinned_too(repo: Path, marker: Path):
    """A subsection is everything between the first and the last dot, ``=`` included (which a
    ``-c key=value`` could not carry)."""
    (repo / ".gitattributes").write_text("*.md filter=a.b=c\n")
    run_git(repo, "config", "filter.a.b=c.clean", f"{_touch(marker)}; cat")
    (repo / "README.md").write_text("changed\n")
    invoke.run(["-C", str(repo), "add", "README.md"], repository=str(repo / ".git"))
    assert not marker.exists()


def test_a_configuration_git_cannot_read_runs_nothing(repo: Path):
    """A broken included file: git itself would stop; the daemon refuses before running anything."""
    broken = repo / ".git" / "broken.cfg"
    broken.write_text("[core\n")
    run_git(repo, "config", "include.path", "broken.cfg")
    with pytest.raises(invoke.GitError, match="configuration could not be read"):
        invoke.run(["-C", str(repo), "status"], repository=str(repo / ".git"))


def test_an_include_cycle_ends(repo: Path):
    """Each file is read once; git itself gives up at its include depth."""
    (repo / ".git" / "a.cfg").write_text("[include]\n\tpath = b.cfg\n")
    (repo / ".git" / "b.cfg").write_text("[include]\n\tpath = a.cfg\n")
    run_git(repo, "config", "include.path", "a.cfg")
    assert invoke.run(["-C", str(repo), "status"], repository=str(repo / ".git")).returncode != 0

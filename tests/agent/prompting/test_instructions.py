"""Project instructions and the environment block (issue 18 item 1): which files, in which order,
how they are bounded, and that a session keeps what it loaded — through real ``shard run``s."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson

from shard.agent.prompting.instructions import MAX_FILE_BYTES, session_context
from shard.testing import recorded_requests, shard_command, text_step, write_scripted_home


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True)
    return repo


def test_files_from_home_then_root_down_to_cwd_nearest_last(tmp_path: Path):
    """Personal first, then each directory from the repository root down; AGENTS.md wins over
    CLAUDE.md in one directory, CLAUDE.md stands in where there is no AGENTS.md; a directory above the
    repository is not read; the environment names the branch."""
    home, repo = tmp_path / "home", _repo(tmp_path)
    home.mkdir()
    (home / "AGENTS.md").write_text("PERSONAL: be brief")
    (tmp_path / "AGENTS.md").write_text("ABOVE THE REPO")
    (repo / "AGENTS.md").write_text("ROOT: use tabs")
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE: never read")
    (repo / "pkg" / "CLAUDE.md").write_text("PKG: run make test")
    cwd = repo / "pkg" / "deep"
    context = session_context(cwd, home)
    text = context["context"]
    assert [Path(f["path"]).relative_to(tmp_path).as_posix() for f in context["context_files"]] == [
        "home/AGENTS.md",
        "repo/AGENTS.md",
        "repo/pkg/CLAUDE.md",
    ]
    assert text.index("PERSONAL") < text.index("ROOT: use tabs") < text.index("PKG: run make test")
    assert "ROOT-CLAUDE" not in text
    assert "ABOVE THE REPO" not in text
    assert f"in a git repository ({repo}), branch trunk" in text
    assert "OS: " in text
    assert "Shell: " in text


def test_a_large_file_is_cut_with_a_visible_note(tmp_path: Path):
    home, repo = tmp_path / "home", _repo(tmp_path)
    home.mkdir()
    (repo / "AGENTS.md").write_text("x" * (MAX_FILE_BYTES + 500))
    context = session_context(repo, home)
    (loaded,) = context["context_files"]
    assert loaded["truncated"] is True
    assert loaded["bytes"] == MAX_FILE_BYTES + 500
    assert (
        f"[… truncated by Shard: {MAX_FILE_BYTES} of {MAX_FILE_BYTES + 500} bytes shown]"
        in context["context"]
    )


def test_outside_a_repository_only_the_working_directory_counts(tmp_path: Path):
    home, cwd = tmp_path / "home", tmp_path / "plain" / "dir"
    home.mkdir()
    cwd.mkdir(parents=True)
    (tmp_path / "plain" / "AGENTS.md").write_text("PARENT")
    (cwd / "AGENTS.md").write_text("HERE")
    context = session_context(cwd, home)
    assert "HERE" in context["context"]
    assert "PARENT" not in context["context"]
    assert "not in git" in context["context"]


def _run(home: Path, cwd: Path, *args: str) -> list[dict]:
    result = subprocess.run(
        shard_command("run", "--json", *args),
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home)},
        capture_output=True,
        timeout=60,
        check=True,
    )
    return [orjson.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_a_session_keeps_what_it_loaded_and_the_next_one_sees_the_change(tmp_path: Path):
    """The model's system prompt holds the project's AGENTS.md and sync names it; edited afterwards,
    the same session (continued) still has the old text, and a new session the new one; ``shard
    sessions show`` says which files were loaded."""
    home, repo = tmp_path / "home", _repo(tmp_path)
    write_scripted_home(home, [text_step("ok")], loop=True)
    (repo / "AGENTS.md").write_text("FIRST-VERSION of the rules")
    events = _run(home, repo, "one")
    sync = next(e for e in events if e["type"] == "sync")
    assert [f["path"] for f in sync["instructions"]] == [str(repo / "AGENTS.md")]
    (repo / "AGENTS.md").write_text("SECOND-VERSION of the rules")
    _run(home, repo, "--continue", "two")
    _run(home, repo, "three")
    systems = [r["system"] for r in recorded_requests(home)]
    assert "FIRST-VERSION" in systems[0]
    assert "FIRST-VERSION" in systems[1]  # the continued session: never changed mid-session
    assert "SECOND-VERSION" in systems[2]  # a new session
    shown = subprocess.run(
        shard_command("sessions", "show", sync["session_id"]),
        env={**os.environ, "SHARD_HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"instructions  {repo / 'AGENTS.md'} (" in shown

"""Agent definitions (issue 14): Markdown files with front matter in the project's and the user's
agents folders, read from real files in temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.prompting.definitions import MAX_PROMPT_BYTES, Definition, load_definitions


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".shard" / "agents").mkdir(parents=True)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / "agents").mkdir(parents=True)
    return path


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


def test_a_full_definition_is_read(cwd: Path, home: Path):
    """Every key, a list of tools in brackets, quotes removed, the body as the prompt."""
    path = _write(
        cwd / ".shard" / "agents",
        "reviewer",
        "---\n"
        "description: Reviews a diff for bugs\n"
        'model: "test/m"\n'
        "mode: plan\n"
        "tools: [read, 'grep', find]\n"
        "headless_policy: queue\n"
        "---\n"
        "You review code.\n\nMost serious first.\n",
    )
    found, problems = load_definitions(cwd, home)
    assert problems == []
    assert found == {
        "reviewer": Definition(
            name="reviewer",
            description="Reviews a diff for bugs",
            prompt="You review code.\n\nMost serious first.",
            model="test/m",
            mode="plan",
            tools=("read", "grep", "find"),
            headless_policy="queue",
            source=path,
        )
    }


def test_tools_without_brackets_and_optional_keys_absent(cwd: Path, home: Path):
    _write(home / "agents", "scout", "---\ndescription: Finds things\ntools: read, grep\n---\nLook.\n")
    found, problems = load_definitions(cwd, home)
    assert problems == []
    scout = found["scout"]
    assert scout.tools == ("read", "grep")
    assert (scout.model, scout.mode, scout.headless_policy) == (None, None, None)
    assert scout.source == home / "agents" / "scout.md"


def test_the_project_wins_over_the_user_and_names_match_case_insensitively(cwd: Path, home: Path):
    _write(home / "agents", "Reviewer", "---\ndescription: the user's\n---\nuser prompt\n")
    _write(home / "agents", "helper", "---\ndescription: only the user's\n---\nhelp\n")
    _write(cwd / ".shard" / "agents", "reviewer", "---\ndescription: the project's\n---\nproject prompt\n")
    found, problems = load_definitions(cwd, home)
    assert problems == []
    assert sorted(found) == ["helper", "reviewer"]
    assert found["reviewer"].description == "the project's"
    assert found["reviewer"].prompt == "project prompt"


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("bad name", "---\ndescription: x\n---\n", "is not letters"),
        ("-dash", "---\ndescription: x\n---\n", "is not letters"),
        ("nodesc", "---\nmodel: test/m\n---\nbody\n", "'description' is required"),
        ("unknown", "---\ndescription: x\ncolor: red\n---\n", "unknown key 'color'"),
        ("nofront", "description: x\n", "does not start with a '---' line"),
        ("unclosed", "---\ndescription: x\nbody\n", "line 3 is not 'key: value'"),
        ("open", "---\ndescription: x\n", "no closing '---'"),
        ("twice", "---\ndescription: x\ndescription: y\n---\n", "given twice"),
        ("policy", "---\ndescription: x\nheadless_policy: yes\n---\n", "headless_policy 'yes'"),
        ("long", "---\ndescription: x\n---\n" + "a" * (MAX_PROMPT_BYTES + 1), "at most 32768"),
    ],
)
def test_a_bad_file_is_skipped_with_one_line(cwd: Path, home: Path, name: str, text: str, reason: str):
    """The bad file is skipped with one problem line naming it and why; the good one beside it loads."""
    path = _write(cwd / ".shard" / "agents", name, text)
    _write(cwd / ".shard" / "agents", "good", "---\ndescription: fine\n---\nok\n")
    found, problems = load_definitions(cwd, home)
    assert list(found) == ["good"]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"agent definition {path}: ")
    assert reason in problems[0]
    assert problems[0].endswith("; skipped")
    assert "\n" not in problems[0]


def test_a_body_at_the_bound_is_accepted_and_multibyte_text_counts_bytes(cwd: Path, home: Path):
    _write(cwd / ".shard" / "agents", "edge", "---\ndescription: x\n---\n" + "a" * MAX_PROMPT_BYTES)
    _write(
        cwd / ".shard" / "agents", "wide", "---\ndescription: x\n---\n" + "é" * (MAX_PROMPT_BYTES // 2 + 1)
    )
    found, problems = load_definitions(cwd, home)
    assert list(found) == ["edge"]
    assert "wide.md" in problems[0]


def test_two_files_of_one_folder_differing_only_in_case_keep_the_first(cwd: Path, home: Path):
    _write(home / "agents", "Dup", "---\ndescription: first\n---\n")
    _write(home / "agents", "dup", "---\ndescription: second\n---\n")
    found, problems = load_definitions(cwd, home)
    assert found["dup"].description == "first"
    assert len(problems) == 1
    assert "has the same name" in problems[0]


def test_missing_folders_and_other_files_are_no_problem(tmp_path: Path):
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "notes.txt").write_text("not a definition")
    (home / "agents" / "sub.md").mkdir()
    assert load_definitions(tmp_path / "nowhere", home) == ({}, [])


def test_a_file_that_is_not_utf8_is_skipped(cwd: Path, home: Path):
    (home / "agents" / "latin.md").write_bytes(b"---\ndescription: caf\xe9\n---\n")
    found, problems = load_definitions(cwd, home)
    assert found == {}
    assert "not UTF-8" in problems[0]

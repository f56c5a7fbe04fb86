"""Boundary: nothing a confined command writes runs later outside the sandbox (issue 25 item 2).

Real bubblewrap, real git repositories, real files. A confined command tries every way to change
what decides the code that runs later — git's config and hooks (directly, through ``git config``,
by moving ``.git`` aside and making a new one), a worktree's ``.git`` file and the git directory it
names, the project's agent definitions, its instructions, other tools' settings — and to create
them where they do not exist yet. The host's files are compared byte for byte afterwards; ordinary
files in the same folders are still written; no placeholder is left behind.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shard.agent.sandbox.bwrap import configured
from shard.agent.tools.base import ToolContext
from shard.agent.tools.bash import READ_ONLY_NOTE, BashParams, BashTool
from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    """A temporary folder outside /tmp (inside, /tmp is private: its folders are out of sight)."""
    path = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="shard-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=T", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", ".")
    (path / "README").write_text("readme\n")
    _git(path, "add", "README")
    _git(path, "commit", "-qm", "first")
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (git's objects aside) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "objects" not in p.parts and not p.is_symlink()
    }


async def _confined(cwd: Path, command: str, **settings: object) -> str:
    sandbox = configured("auto", shard_home=cwd.parent / "shard-home", **settings)  # type: ignore[arg-type]
    tool, args = BashTool(), BashParams(command=command)
    ctx = ToolContext(cwd=cwd, sandbox=sandbox)
    assert tool.confined(args, ctx)
    out = await tool.execute(args, ctx)
    return out.content.text  # type: ignore[union-attr]


PROJECT_FILES = {
    ".shard/agents/reviewer.md": "---\nname: reviewer\n---\nReview.\n",
    ".shard/config.toml": "# project settings\n",
    "AGENTS.md": "Be careful.\n",
    "CLAUDE.md": "Be careful too.\n",
    ".mcp.json": '{"mcpServers": {}}\n',
    ".gitmodules": "",
    ".vscode/tasks.json": "{}\n",
    ".idea/workspace.xml": "<project/>\n",
    ".claude/settings.json": "{}\n",
    ".codex/config.toml": "\n",
}
ATTEMPTS = [
    "git config core.fsmonitor 'touch /tmp/pwned'",
    "printf '[filter \"x\"]\\n\\tsmudge = touch /tmp/pwned\\n' >> .git/config",
    "echo 'touch /tmp/pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    "mv .git .git-aside && mkdir -p .git/hooks && echo evil > .git/hooks/post-checkout",
    "rm -rf .git/hooks .git/config",
    "rm -rf .shard; mkdir -p .shard/agents && echo evil > .shard/agents/x.md",
    "echo evil > .shard/agents/planted.md",
    "for f in AGENTS.md CLAUDE.md .mcp.json .gitmodules; do echo evil >> $f; mv $f $f.aside; done",
    "for d in .vscode .idea .claude .codex; do echo evil > $d/planted; mv $d $d-aside; done",
    "echo kept > work.txt",
]


async def test_what_decides_later_code_stays_read_only_in_a_writable_root(tmp_path: Path):
    """A repository with the project's agent definitions, instructions and tool settings: every
    attempt fails, the host's files are unchanged (git's config has no fsmonitor, no hook was
    made, nothing moved aside), an ordinary file is written, and the result tells the model to
    run such a command with ``sandbox: false``."""
    project = _repository(tmp_path / "project")
    for name, text in PROJECT_FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    before = _snapshot(project)
    text = await _confined(project, " ; ".join(ATTEMPTS) + "; ls -A")
    after = _snapshot(project)
    assert after.pop("work.txt") == b"kept\n"
    assert after == before
    assert not (project / ".git-aside").exists()
    assert "fsmonitor" not in _git(project, "config", "--list")
    assert not Path("/tmp/pwned").exists()
    assert READ_ONLY_NOTE in text


async def test_a_missing_place_cannot_be_created_and_nothing_is_left_behind(tmp_path: Path):
    """A folder with none of them: a repository (``git init``, or a hook made by hand), an agent
    definition, instructions — none is made; the command's own file is; after the call the folder
    holds exactly that file (no placeholder stays)."""
    project = tmp_path / "project"
    project.mkdir()
    attempts = [
        "git init -q .",
        "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
        "mkdir -p .shard/agents && echo evil > .shard/agents/x.md",
        "echo evil > AGENTS.md; echo evil > CLAUDE.md",
        "echo kept > work.txt",
    ]
    text = await _confined(project, " ; ".join(attempts))
    assert sorted(p.name for p in project.iterdir()) == ["work.txt"]
    assert READ_ONLY_NOTE in text


async def test_in_a_repository_subfolder_git_works_and_no_repository_can_be_made(var_tmp: Path):
    """The working directory is a folder of a repository (a monorepo package): git inside still
    finds the enclosing repository (outside /tmp: the sandbox's /tmp is its own), but no
    repository of its own can be made there."""
    repo = _repository(var_tmp / "repo")
    package = repo / "packages" / "one"
    package.mkdir(parents=True)
    text = await _confined(package, "git rev-parse --show-toplevel; git init -q . ; echo end")
    assert text.splitlines()[0] == str(repo)
    assert "\nend\n" in text
    assert sorted(p.name for p in package.iterdir()) == []


async def test_a_worktree_its_git_dir_and_common_dir_are_protected(tmp_path: Path):
    """A linked worktree as working directory, its main repository writable too: the ``.git``
    file cannot be replaced, and neither the worktree's git directory nor the common one (config,
    hooks) can be changed; ordinary files in both roots are written."""
    main = _repository(tmp_path / "main")
    tree = tmp_path / "tree"
    _git(main, "worktree", "add", "-q", str(tree))
    before_tree, before_main = _snapshot(tree), _snapshot(main)
    gitdir = main / ".git" / "worktrees" / "tree"
    attempts = [
        "echo 'gitdir: /tmp/elsewhere' > .git",
        "rm -f .git; mkdir .git",
        f"echo '[core] fsmonitor = touch /tmp/pwned' >> {gitdir}/config.worktree",
        f"echo evil > {gitdir}/commondir",
        f"git config core.hooksPath /tmp; echo evil >> {main}/.git/config",
        f"echo evil > {main}/.git/hooks/post-checkout",
        f"echo kept > work.txt; echo kept > {main}/work.txt",
    ]
    await _confined(tree, " ; ".join(attempts), writable=(main,))
    after_tree, after_main = _snapshot(tree), _snapshot(main)
    assert after_tree.pop("work.txt") == b"kept\n"
    assert after_main.pop("work.txt") == b"kept\n"
    assert (after_tree, after_main) == (before_tree, before_main)
    assert "hookspath" not in _git(tree, "config", "--list").lower()


async def test_places_deeper_in_a_root_and_the_folders_above_them(tmp_path: Path):
    """A package's own ``AGENTS.md`` and agent definitions, a vendored repository two levels
    down: unchanged, and the folders holding them cannot be moved aside to make new ones — yet
    they stay writable for everything else."""
    project = tmp_path / "project"
    (project / "pkg" / ".shard" / "agents").mkdir(parents=True)
    (project / "pkg" / "AGENTS.md").write_text("package rules\n")
    (project / "pkg" / ".shard" / "agents" / "a.md").write_text("agent\n")
    _repository(project / "vendor" / "lib")
    before = _snapshot(project)
    attempts = [
        "echo evil >> pkg/AGENTS.md; echo evil > pkg/.shard/agents/b.md",
        "mv pkg pkg-aside && mkdir -p pkg/.shard/agents && echo evil > pkg/AGENTS.md",
        "echo '[core] fsmonitor = x' >> vendor/lib/.git/config; mv vendor v-aside",
        "echo kept > pkg/new.txt",
    ]
    await _confined(project, " ; ".join(attempts))
    after = _snapshot(project)
    assert after.pop("pkg/new.txt") == b"kept\n"
    assert after == before
    assert sorted(p.name for p in project.iterdir()) == ["pkg", "vendor"]


async def test_one_call_ending_does_not_unguard_another_still_running(tmp_path: Path):
    """Two confined calls in one folder: the first ends while the second still runs; the second
    still cannot make a repository (the placeholder it relies on is not removed under it), and
    once both are over nothing is left behind."""
    project = tmp_path / "project"
    project.mkdir()
    waiting = "while [ ! -e go ]; do sleep 0.02; done; git init -q . ; mkdir -p .shard/agents; echo done"
    slow = asyncio.ensure_future(_confined(project, waiting))
    for _ in range(200):  # until the slow call's sandbox is up
        if (project / ".git").exists():
            break
        await asyncio.sleep(0.02)
    assert (project / ".git").exists(), "the slow call never started"
    assert (await _confined(project, "echo quick")).strip() == "quick"
    (project / "go").touch()
    assert "done" in await asyncio.wait_for(slow, 30)
    assert sorted(p.name for p in project.iterdir()) == ["go"]


async def test_a_commit_inside_fails_and_says_to_run_it_outside(tmp_path: Path):
    """Through a real runtime in ``auto``: a ``git commit`` in the project's repository fails
    inside (``.git`` is read-only there), and the tool result says to run it with ``sandbox:
    false``; the repository is as it was."""
    project = _repository(tmp_path / "project")
    (project / "new.txt").write_text("new\n")
    home = write_scripted_home(
        tmp_path / "home",
        [tool_step("bash", {"command": "git add new.txt && git commit -qm second"}), text_step("done")],
    )
    agent = await AgentProcess.start(home, project, "--sandbox", "auto")
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "go"})
        read = await agent.until_type("turn_end")
    finally:
        await agent.kill()
    (result,) = [m for m in read if m["type"] == "tool_result"]
    assert "Read-only file system" in result["content"]["text"]
    assert READ_ONLY_NOTE in result["content"]["text"]
    assert "sandbox: false" in READ_ONLY_NOTE
    assert _git(project, "log", "--oneline").count("\n") == 1


@pytest.mark.parametrize("name", [".bashrc", ".profile", ".zshrc", ".gitconfig"])
async def test_a_home_as_working_directory_keeps_its_start_up_files(
    name: str, var_tmp: Path, monkeypatch: pytest.MonkeyPatch
):
    """With the home writable, its shell start-up files and git settings are read-only, and a
    missing one (``.zshenv``) cannot be created; an ordinary file is written."""
    monkeypatch.setenv("HOME", str(var_tmp))
    (var_tmp / name).write_text("# mine\n")
    text = await _confined(var_tmp, f"echo evil >> {name}; echo evil > .zshenv; echo kept > work.txt")
    assert (var_tmp / name).read_text() == "# mine\n"
    assert sorted(p.name for p in var_tmp.iterdir()) == sorted([name, "work.txt"])
    assert "Read-only file system" in text

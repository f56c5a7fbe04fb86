"""``workspace.diff`` through a real daemon on real repositories: the agent's commits, edits,
untracked files, renames, deletions, binaries and links against the merge-base with the integration
target; the repository's own diff programs, textconv and fsmonitor never run; the answer is bounded;
and the errors of the other workspace commands."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from shard.testing import DaemonProcess, text_step
from workspaces.conftest import commit, git


async def created(daemon: DaemonProcess, repo: Path) -> tuple[Any, dict[str, Any]]:
    client = await daemon.unix()
    made, _ = await client.request({"type": "workspace.create", "id": "c", "cwd": str(repo), "label": "work"})
    assert made["success"], made
    return client, made["data"]["workspace"]


async def diff_of(client: Any, workspace_id: str, **extra: Any) -> dict[str, Any]:
    message = {"type": "workspace.diff", "id": "d", "workspace_id": workspace_id, **extra}
    response, _ = await client.request(message)
    return response


def by_path(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in data["files"]}


async def test_the_diff_holds_commits_edits_and_untracked_files_against_the_merge_base(
    daemon_factory, repo: Path, home: Path, tmp_path: Path
):
    """Covers: R10.1a.2, R10.1a.3, R10.1a.20"""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET outside the worktree\n")
    commit(repo, "app.py", "def main():\n    return 41\n")
    commit(repo, "old_name.txt", "moved\nas it was\n")
    commit(repo, "gone.txt", "bye\n")
    commit(repo, ".gitignore", "*.log\n")
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client, ws = await created(daemon, repo)
    tree = Path(ws["cwd"])
    commit(tree, "committed.txt", "the agent committed this\n")  # a commit of the agent's
    commit(repo, "later_on_main.txt", "main moved on\n")  # not the agent's: the merge-base hides it
    (tree / "app.py").write_text("def main():\n    return 42\n")
    git(tree, "mv", "old_name.txt", "new_name.txt")
    (tree / "gone.txt").unlink()
    (tree / "<img src=x onerror=alert(1)>.txt").write_text("<b>untracked</b>\n")
    (tree / "data.bin").write_bytes(bytes(range(256)) * 4)
    (tree / "debug.log").write_text("ignored\n")
    os.symlink(secret, tree / "link")
    before = git(tree, "status", "--porcelain")

    response = await diff_of(client, ws["workspace_id"], version=1)
    assert response["success"], response
    data = response["data"]
    main_tip = git(repo, "rev-parse", "main")
    fork_point = git(tree, "merge-base", "HEAD", "main")
    assert fork_point != main_tip
    assert data["base"] == {"ref": "main", "commit": fork_point[:12]}
    assert data["head"] == git(tree, "rev-parse", "HEAD")[:12]
    files = by_path(data)
    assert set(files) == {
        "committed.txt",
        "app.py",
        "new_name.txt",
        "gone.txt",
        "<img src=x onerror=alert(1)>.txt",
        "data.bin",
        "link",
    }
    assert data["total_files"] == 7
    assert data["truncated"] is False
    assert files["app.py"]["status"] == "modified"
    assert (files["app.py"]["added"], files["app.py"]["removed"]) == (1, 1)
    assert files["app.py"]["hunks"] == [
        {
            "old_start": 1,
            "old_lines": 2,
            "new_start": 1,
            "new_lines": 2,
            "lines": [" def main():", "-    return 41", "+    return 42"],
        }
    ]
    assert files["committed.txt"]["status"] == "added"
    assert files["committed.txt"]["hunks"][0]["lines"] == ["+the agent committed this"]
    assert files["new_name.txt"]["status"] == "renamed"
    assert files["new_name.txt"]["old_path"] == "old_name.txt"
    assert files["gone.txt"]["status"] == "deleted"
    assert files["gone.txt"]["hunks"][0]["lines"] == ["-bye"]
    untracked = files["<img src=x onerror=alert(1)>.txt"]
    assert untracked["status"] == "added"
    assert untracked["hunks"][0]["lines"] == ["+<b>untracked</b>"]
    assert files["data.bin"]["binary"] is True
    assert files["data.bin"]["hunks"] == []
    # a link is its target's text, never followed
    assert files["link"]["hunks"][0]["lines"] == [f"+{secret}"]
    wire = str(response)
    assert "TOP SECRET" not in wire
    assert str(home) not in wire  # no daemon path: every path is relative to the worktree
    assert str(tree) not in wire
    # nothing of the worktree was written: its index still has the untracked files untracked
    assert git(tree, "status", "--porcelain") == before


def marker_script(folder: Path, marker: Path) -> Path:
    script = folder / "run-me.sh"
    script.write_text(f'#!/bin/sh\ntouch {shlex.quote(str(marker))}\ncat "$@" 2>/dev/null\nexit 0\n')
    script.chmod(0o755)
    return script


async def test_nothing_the_repository_names_runs_when_its_worktree_is_diffed(
    daemon_factory, repo: Path, tmp_path: Path
):
    """The repository's config and the agent's own .gitattributes name an external diff, a diff
    driver with a textconv and a command, an fsmonitor, a pager and an index hook: the daemon's git
    runs none of them."""
    marker = tmp_path / "ran"
    script = marker_script(tmp_path, marker)
    commit(repo, "notes.txt", "one\ntwo\n")
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client, ws = await created(daemon, repo)
    tree = Path(ws["cwd"])
    git(repo, "config", "diff.external", str(script))
    git(repo, "config", "diff.pwn.textconv", str(script))
    git(repo, "config", "diff.pwn.command", str(script))
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "core.pager", str(script))
    hooks = repo / ".git" / "hooks"
    (hooks / "post-index-change").symlink_to(script)  # git add runs it when the index changes
    (tree / ".gitattributes").write_text("* diff=pwn\n")
    (tree / "notes.txt").write_text("one\nthree\n")
    (tree / "new.txt").write_text("fresh\n")
    # the attack is armed: git as a person runs it would run the script
    git(tree, "diff", "HEAD")
    assert marker.exists()
    marker.unlink()
    git(tree, "add", "--intent-to-add", "new.txt")  # the hook, as the diff's own add would run it
    assert marker.exists()
    marker.unlink()
    git(tree, "reset", "-q", "new.txt")
    marker.unlink(missing_ok=True)  # reset changed the index too

    response = await diff_of(client, ws["workspace_id"])
    assert response["success"], response
    assert not marker.exists(), "workspace.diff ran a program the repository named"
    files = by_path(response["data"])
    assert files["notes.txt"]["hunks"][0]["lines"] == [" one", "-two", "+three"]  # git's own diff
    assert files["new.txt"]["hunks"][0]["lines"] == ["+fresh"]
    assert files[".gitattributes"]["status"] == "added"


async def test_the_answer_is_bounded_and_says_what_was_cut(daemon_factory, repo: Path):
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client, ws = await created(daemon, repo)
    tree = Path(ws["cwd"])
    (tree / "big.txt").write_text("a line of a large text file\n" * 50_000)  # 1.4 MB: not diffed
    response = await diff_of(client, ws["workspace_id"])
    big = by_path(response["data"])["big.txt"]
    assert big["truncated"] is True
    assert big["hunks"] == []
    assert not big.get("binary")
    assert response["data"]["truncated"] is True
    (tree / "big.txt").unlink()
    many = tree / "many"
    many.mkdir()
    for i in range(520):
        (many / f"f{i:03}.txt").write_text(f"{i}\n")
    response = await diff_of(client, ws["workspace_id"])
    data = response["data"]
    assert len(data["files"]) == 500
    assert data["total_files"] == 520
    assert data["truncated"] is True
    assert len(str(response)) < 4 * 1024 * 1024


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"type": "workspace.diff"}, "INVALID_REQUEST"),
        ({"type": "workspace.diff", "workspace_id": 7}, "INVALID_REQUEST"),
        ({"type": "workspace.diff", "workspace_id": "ws-x", "version": 2}, "INVALID_REQUEST"),
        ({"type": "workspace.diff", "workspace_id": "ws-nope"}, "NOT_FOUND"),
    ],
)
@pytest.mark.no_local_runtimes
async def test_bad_requests_are_refused_as_the_other_workspace_commands_refuse_them(
    daemon_factory, message: dict[str, Any], code: str
):
    """Covers: R10.1a.3"""
    daemon = await daemon_factory([text_step("hi")])
    client = await daemon.unix()
    response, _ = await client.request({**message, "id": "x"})
    assert response["success"] is False
    assert response["error"]["code"] == code


async def test_a_retired_or_vanished_worktree_is_a_conflict(daemon_factory, repo: Path):
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client, ws = await created(daemon, repo)
    other, _ = await client.request(
        {"type": "workspace.create", "id": "c2", "cwd": str(repo), "label": "two"}
    )
    git(repo, "worktree", "remove", "--force", other["data"]["workspace"]["cwd"])
    gone = await diff_of(client, other["data"]["workspace"]["workspace_id"])
    assert gone["error"]["code"] == "CONFLICT", gone
    assert "gone" in gone["error"]["message"]
    for agent_id in (other["data"]["agent_id"], ws["bindings"][0]["agent_id"]):
        stopped, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent_id})
        assert stopped["success"], stopped
    retire = {"type": "workspace.retire", "id": "r", "workspace_id": ws["workspace_id"]}
    retired, _ = await client.request(retire)
    assert retired["success"], retired
    refused = await diff_of(client, ws["workspace_id"])
    assert refused["error"]["code"] == "CONFLICT"
    assert refused["error"]["data"]["kind"] == "retired"

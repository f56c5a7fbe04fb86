"""``workspace.diff``'s cost through a real daemon (unix socket), the round trip a client sees: a
worktree of a repository of 5,000 tracked files with 50 edited, 20 untracked and 2 committed by the
agent; the same worktree untouched; and one with 600 untracked files (past the 500-file bound).

    python bench/workspace_diff.py [--runs 20]

Prints medians and saves them to bench/results/workspace_diff.json.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from harness import median_request_ms, report
from shard.testing import DaemonProcess, text_step, write_scripted_home

GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True)


def make_repository(root: Path) -> Path:
    repo = root / "project"
    for d in range(50):
        folder = repo / f"pkg{d:02d}"
        folder.mkdir(parents=True)
        for i in range(100):
            body = "".join(f"def f{n}():\n    return {n}\n\n" for n in range(20))
            (folder / f"mod{i:03d}.py").write_text(body)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    return repo


def change(tree: Path) -> None:
    for i in range(50):
        path = tree / f"pkg{i:02d}" / "mod000.py"
        path.write_text(path.read_text().replace("return 3\n", "return 33\n"))
    for i in range(20):
        (tree / f"new{i:02d}.txt").write_text("fresh\n" * 10)
    for i in range(2):
        (tree / f"committed{i}.txt").write_text("by the agent\n")
        git(tree, "add", f"committed{i}.txt")
        git(tree, "commit", "-qm", f"agent {i}")


async def timed(client: Any, workspace_id: str, runs: int) -> tuple[float, dict[str, Any]]:
    return await median_request_ms(client, {"type": "workspace.diff", "workspace_id": workspace_id}, runs)


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repository(root)
        home = write_scripted_home(root / "home", [text_step("hi")], loop=True)
        daemon = await DaemonProcess.start(home)
        try:
            client = await daemon.unix()

            async def workspace(label: str) -> tuple[str, Path]:
                made, _ = await client.request(
                    {"type": "workspace.create", "id": label, "cwd": str(repo), "label": label}
                )
                assert made["success"] is True, made
                return made["data"]["workspace"]["workspace_id"], Path(made["data"]["workspace"]["cwd"])

            clean_id, _ = await workspace("clean")
            changed_id, changed = await workspace("changed")
            change(changed)
            many_id, many = await workspace("many")
            for i in range(600):
                (many / f"untracked{i:03d}.txt").write_text(f"{i}\n")
            clean_ms, _ = await timed(client, clean_id, runs)
            changed_ms, changed_data = await timed(client, changed_id, runs)
            many_ms, many_data = await timed(client, many_id, runs)
        finally:
            await daemon.kill()
    results: dict[str, Any] = {
        "clean_worktree_of_5000_files_ms": clean_ms,
        "72_changed_files_in_5000_ms": changed_ms,
        "72_changed_files_listed": changed_data["total_files"],
        "600_untracked_files_ms": many_ms,
        "600_untracked_files_listed": len(many_data["files"]),
        "600_untracked_truncated": many_data["truncated"],
        "runs": runs,
    }
    report("workspace_diff", results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))

"""Project instructions and the environment block (issue 18 item 1): what the model is told about
where it works, beyond its tools.

* **Instruction files**: ``$SHARD_HOME/AGENTS.md`` (personal), then one file per directory from the
  repository's root down to the working directory — ``AGENTS.md`` (the cross-tool convention), else
  ``CLAUDE.md`` — the nearest last, so it has the last word. Each file keeps at most
  :data:`MAX_FILE_BYTES`, all of them :data:`MAX_TOTAL_BYTES`; a cut says so in the text.
* **Environment**: the OS, the shell, and whether the working directory is in a git repository and on
  which branch (read from ``.git`` itself: no command runs).

Both are read once, when a session is created, and kept in its header: a change to a file takes
effect in the next session, never in the middle of one (nor of a turn), and a restored session sees
what it saw before. Which files were loaded is in ``sync.instructions`` and ``shard sessions show``.
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_FILE_BYTES = 16 * 1024
MAX_TOTAL_BYTES = 48 * 1024


@dataclass(frozen=True, slots=True)
class Loaded:
    path: str
    bytes: int  # the file's size
    truncated: bool


def session_context(cwd: Path, home: Path) -> dict[str, Any]:
    """What a new session's header keeps: ``context`` (text for the system prompt) and
    ``context_files`` (what was loaded)."""
    repo, branch = _git(cwd)
    files, parts, budget = [], [], MAX_TOTAL_BYTES
    for path in [home / "AGENTS.md", *_project_files(cwd, repo)]:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        keep = min(len(data), MAX_FILE_BYTES, budget)
        budget -= keep
        text = data[:keep].decode("utf-8", errors="replace").strip()
        if keep < len(data):
            text += f"\n\n[… truncated by Shard: {keep} of {len(data)} bytes shown]"
        files.append(Loaded(str(path), len(data), keep < len(data)))
        parts.append(f"### {path}\n\n{text}")
        if budget <= 0:
            break
    where = f"in a git repository ({repo}), branch {branch or '(detached)'}" if repo else "not in git"
    system, shell = f"{platform.system()} {platform.release()}", os.environ.get("SHELL", "sh")
    env = f"## Environment\n\nOS: {system}\nShell: {shell}\nWorking directory: {where}"
    text = env + ("\n\n## Project instructions\n\n" + "\n\n".join(parts) if parts else "")
    return {"context": text, "context_files": [asdict(f) for f in files]}


def _project_files(cwd: Path, repo: Path | None) -> list[Path]:
    """One instruction file per directory, from the repository root (or the working directory
    alone, outside a repository) down to the working directory."""
    chain = [cwd]
    if repo is not None:
        at = cwd
        while at != repo and at.parent != at:
            at = at.parent
            chain.append(at)
    found = []
    for directory in reversed(chain):
        for name in NAMES:
            candidate = directory / name
            if candidate.is_file():
                found.append(candidate)
                break
    return found


def _git(cwd: Path) -> tuple[Path | None, str | None]:
    """The repository root holding ``cwd`` and its current branch, from ``.git`` itself."""
    for directory in [cwd, *cwd.parents]:
        dot = directory / ".git"
        if dot.is_dir():
            return directory, _branch(dot / "HEAD")
        if dot.is_file():  # a worktree: "gitdir: <path>"
            try:
                target = dot.read_text().strip().removeprefix("gitdir:").strip()
            except OSError:
                return directory, None
            return directory, _branch((directory / target) / "HEAD")
    return None, None


def _branch(head: Path) -> str | None:
    try:
        ref = head.read_text().strip()
    except OSError:
        return None
    return ref.removeprefix("ref: refs/heads/") if ref.startswith("ref: refs/heads/") else None

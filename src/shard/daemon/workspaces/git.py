"""The git a workspace needs (blocking: run in a worker thread through ``effects.Offload``).

Every call runs ``git`` with the repository named explicitly (``-C`` a directory, or ``--git-dir``
its common dir), an environment without any inherited ``GIT_*`` variable (a daemon started from a
hook must not act on the wrong repository), no terminal prompt, and ``core.hooksPath=/dev/null``:
the daemon never runs a repository's hooks — code from the project is not the daemon's to run on
its own. Refs from clients come after ``--end-of-options`` or are checked by ``check-ref-format``
first, so none can be read as an option. A failure is a :class:`GitError` whose message has the
private paths (common dir, git dir) cut out: it may reach a client.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from shard.daemon.workspaces.model import Observed, Workspace, slug

TIMEOUT = 120.0  # seconds: a checkout of a large repository takes a while


class GitError(Exception):
    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.conflict = conflict  # the request collides with the repository's state (not a bad request)


@dataclass(frozen=True, slots=True)
class Repository:
    main_root: str  # the main checkout: what every sibling reports as repository_cwd
    common_dir: str
    branch: str | None  # the main checkout's current branch (None: detached)


def discover(cwd: str) -> Repository:
    """The repository ``cwd`` is in (a main checkout or any of its worktrees)."""
    out = _git(["-C", cwd, "rev-parse", "--path-format=absolute", "--git-common-dir"], private=())
    common = out.strip()
    listing = _git(["--git-dir", common, "worktree", "list", "--porcelain"], private=(common,))
    first = listing.split("\n\n", 1)[0].splitlines()
    if "bare" in first or not first or not first[0].startswith("worktree "):
        raise GitError("the repository has no main checkout (a bare repository)")
    main_root = os.path.realpath(first[0].removeprefix("worktree "))
    head = _run(["git", "-C", main_root, "symbolic-ref", "--quiet", "--short", "HEAD"])
    branch = head.stdout.strip() if head.returncode == 0 else None
    return Repository(main_root, common, branch)


def worktree_path(root: Path, repo: Repository, label: str, workspace_id: str) -> str:
    """Where a workspace's worktree goes: under the daemon's own folder, one folder per repository."""
    digest = hashlib.sha256(repo.main_root.encode()).hexdigest()[:8]
    group = f"{slug(Path(repo.main_root).name)}-{digest}"
    return str(root / group / f"{slug(label)}-{workspace_id.rsplit('-', 1)[-1][:8]}")


def create(repo: Repository, path: str, branch: str, base_ref: str) -> str:
    """A new worktree at ``path`` on the new ``branch`` from ``base_ref``; the base's commit id."""
    private = (repo.common_dir,)
    check = _run(["git", "check-ref-format", "--branch", branch])
    if check.returncode != 0 or branch.startswith("-"):
        raise GitError(f"{branch!r} is not a valid branch name")
    exists = _run(_with(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"))
    if exists.returncode == 0:
        raise GitError(f"branch {branch!r} already exists; choose another", conflict=True)
    base = _resolve(repo, base_ref)
    Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _git(
        ["-C", repo.main_root, "worktree", "add", "-b", branch, "--end-of-options", path, base],
        private=private,
    )
    return base


def resolve(repo: Repository, ref: str) -> str:
    return _resolve(repo, ref)


def observe(ws: Workspace) -> Observed:
    """The worktree as git sees it now. Raises GitError when the repository itself is gone."""
    if not os.path.isdir(ws.common_dir):
        raise GitError("the repository of the workspace is gone")
    private = (ws.common_dir,)
    listing = _git(["--git-dir", ws.common_dir, "worktree", "list", "--porcelain"], private=private)
    registered = any(
        os.path.realpath(line.removeprefix("worktree ")) == ws.path
        for line in listing.splitlines()
        if line.startswith("worktree ")
    )
    if not os.path.isdir(ws.path):
        return Observed(exists=False, registered=registered)
    head = _run(["git", "-C", ws.path, "rev-parse", "--verify", "--quiet", "HEAD"]).stdout.strip() or None
    status = _run(["git", "-C", ws.path, "status", "--porcelain=v1", "--untracked-files=all", "-z"])
    dirty = len([p for p in status.stdout.split("\0") if p]) if status.returncode == 0 else None
    return Observed(exists=True, head=head, dirty=dirty, registered=registered)


def merged(ws: Workspace) -> bool:
    """True when the branch's tip is reachable from the integration target (git proves it)."""
    args = [
        "merge-base",
        "--is-ancestor",
        "--end-of-options",
        f"refs/heads/{ws.branch}",
        ws.integration_target,
    ]
    result = _run(["git", "--git-dir", ws.common_dir, *args])
    if result.returncode in (0, 1):
        return result.returncode == 0
    raise GitError(
        "git could not tell whether the branch is merged: " + _first(result.stderr, (ws.common_dir,))
    )


def retire(ws: Workspace, *, delete_branch: bool) -> None:
    """Remove the worktree (git refuses one with changes: nothing is forced) and, if asked, its branch."""
    private = (ws.common_dir,)
    if os.path.isdir(ws.path):
        _git(["--git-dir", ws.common_dir, "worktree", "remove", "--end-of-options", ws.path], private=private)
    else:  # deleted behind the daemon's back: git is told to forget it
        _git(["--git-dir", ws.common_dir, "worktree", "prune"], private=private)
    if delete_branch:
        _git(["--git-dir", ws.common_dir, "branch", "-D", "--end-of-options", ws.branch], private=private)


_NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


def _with(repo: Repository, *args: str) -> list[str]:
    return ["git", "--git-dir", repo.common_dir, *args]


def _resolve(repo: Repository, ref: str) -> str:
    result = _run(_with(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"))
    if result.returncode != 0:
        raise GitError(f"{ref!r} names no commit of the repository")
    return result.stdout.strip()


def _git(args: list[str], *, private: tuple[str, ...]) -> str:
    result = _run(["git", *args])
    if result.returncode != 0:
        raise GitError(_first(result.stderr, private) or f"git {args[-1]} failed")
    return result.stdout


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    argv = [argv[0], *_NO_HOOKS, *argv[1:]]
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git took longer than {TIMEOUT:g} s") from None


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return env


def _first(stderr: str, private: tuple[str, ...]) -> str:
    """git's message, one line, private paths cut out."""
    line = next((ln.strip() for ln in stderr.splitlines() if ln.strip()), "")
    for path in private:
        if path:
            line = line.replace(path, "<repository>")
    return line[:300]

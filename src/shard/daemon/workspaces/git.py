"""The git a workspace needs (blocking: run in a worker thread through ``effects.Offload``).

Every call goes through :mod:`invoke` — nothing a repository's files name ever runs — with the
repository named explicitly: ``--git-dir`` its common dir, or, inside a workspace, the worktree's own
git dir and work tree, once :func:`linked` has proved that the worktree's ``.git`` file still leads
into the recorded common dir and that the common dir's record of the worktree leads back. git never
follows a ``.git`` of the worktree's choosing: a command inside may have rewritten it to lead to a
repository of its own, or removed it so that git would find the repository around the daemon's
folder. Refs from clients come after ``--end-of-options`` or are checked by ``check-ref-format``
first, so none can be read as an option. A failure is a :class:`GitError` whose message has the
private paths (common dir, git dir) cut out: it may reach a client.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from shard.daemon.workspaces import invoke
from shard.daemon.workspaces.invoke import GitError as GitError
from shard.daemon.workspaces.model import Observed, Workspace, slug

_MAX_GITFILE = 4096  # a .git file or a worktree's record is one path


class IgnoredFiles(GitError):
    """The worktree holds git-ignored files that removing it would delete (nothing was removed).
    ``paths``: relative to the worktree, as git names them (a folder ends with ``/``)."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"the worktree holds {len(paths)} git-ignored path(s)", conflict=True)
        self.paths = paths


@dataclass(frozen=True, slots=True)
class Repository:
    main_root: str  # the main checkout: what every sibling reports as repository_cwd
    common_dir: str
    branch: str | None  # the main checkout's current branch (None: detached)


def discover(cwd: str) -> Repository:
    """The repository ``cwd`` is in (a main checkout or any of its worktrees)."""
    out = invoke.output(
        ["-C", cwd, "rev-parse", "--path-format=absolute", "--git-common-dir"], repository=None
    )
    common = out.strip()
    listing = _git(common, "worktree", "list", "--porcelain")
    first = listing.split("\n\n", 1)[0].splitlines()
    if "bare" in first or not first or not first[0].startswith("worktree "):
        raise GitError("the repository has no main checkout (a bare repository)")
    main_root = os.path.realpath(first[0].removeprefix("worktree "))
    head = invoke.run(["--git-dir", common, "symbolic-ref", "--quiet", "--short", "HEAD"], repository=common)
    branch = head.stdout.strip() if head.returncode == 0 else None
    return Repository(main_root, common, branch)


def worktree_path(root: Path, repo: Repository, label: str, workspace_id: str) -> str:
    """Where a workspace's worktree goes: under the daemon's own folder, one folder per repository."""
    digest = hashlib.sha256(repo.main_root.encode()).hexdigest()[:8]
    group = f"{slug(Path(repo.main_root).name)}-{digest}"
    return str(root / group / f"{slug(label)}-{workspace_id.rsplit('-', 1)[-1][:8]}")


def create(repo: Repository, path: str, branch: str, base_ref: str) -> str:
    """A new worktree at ``path`` on the new ``branch`` from ``base_ref``; the base's commit id."""
    common = repo.common_dir
    check = invoke.run(["check-ref-format", "--branch", branch], repository=None)
    if check.returncode != 0 or branch.startswith("-"):
        raise GitError(f"{branch!r} is not a valid branch name")
    exists = invoke.run(
        ["--git-dir", common, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"], repository=common
    )
    if exists.returncode == 0:
        raise GitError(f"branch {branch!r} already exists; choose another", conflict=True)
    base = _resolve(repo.common_dir, base_ref)
    Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _git(common, "worktree", "add", "-b", branch, "--end-of-options", path, base)
    return base


def resolve(repo: Repository, ref: str) -> str:
    return _resolve(repo.common_dir, ref)


def observe(ws: Workspace) -> Observed:
    """The worktree as git sees it now. Raises GitError when the repository itself is gone. A
    worktree whose ``.git`` no longer leads to its record is not looked into: ``registered=False``."""
    if not os.path.isdir(ws.common_dir):
        raise GitError("the repository of the workspace is gone")
    listing = _git(ws.common_dir, "worktree", "list", "--porcelain")
    registered = any(
        os.path.realpath(line.removeprefix("worktree ")) == ws.path
        for line in listing.splitlines()
        if line.startswith("worktree ")
    )
    if not os.path.isdir(ws.path):
        return Observed(exists=False, registered=registered)
    gitdir = linked(ws)
    if gitdir is None:
        return Observed(exists=True, registered=False)
    head = invoke.run(
        [*inside(ws, gitdir), "rev-parse", "--verify", "--quiet", "HEAD"], repository=ws.common_dir
    )
    changed = _status(ws, gitdir, ignored=False)
    dirty = None if changed is None else len(changed[0])
    return Observed(exists=True, head=head.stdout.strip() or None, dirty=dirty, registered=registered)


def merged(ws: Workspace) -> bool:
    """True when the branch's tip is reachable from the integration target (git proves it)."""
    args = [
        "merge-base",
        "--is-ancestor",
        "--end-of-options",
        f"refs/heads/{ws.branch}",
        ws.integration_target,
    ]
    result = invoke.run(["--git-dir", ws.common_dir, *args], repository=ws.common_dir)
    if result.returncode in (0, 1):
        return result.returncode == 0
    raise GitError(
        "git could not tell whether the branch is merged: "
        + invoke.first_line(result.stderr, (ws.common_dir,))
    )


def retire(ws: Workspace, *, delete_branch: bool, discard_ignored: bool = False) -> None:
    """Remove the worktree (git refuses one with changes: nothing is forced) and, if asked, its branch.
    Git-ignored files would go with it: unless ``discard_ignored``, raises :class:`IgnoredFiles`
    first, looked for just before the removal."""
    if os.path.isdir(ws.path):
        gitdir = linked(ws)
        if gitdir is None:
            raise GitError("the worktree's .git no longer leads to its repository", conflict=True)
        if not discard_ignored:
            changed = _status(ws, gitdir, ignored=True)
            if changed is None:
                raise GitError("git could not list the worktree's files")
            if changed[1]:
                raise IgnoredFiles(changed[1])
        _git(ws.common_dir, "worktree", "remove", "--end-of-options", ws.path)
    else:  # deleted behind the daemon's back: git is told to forget it
        _git(ws.common_dir, "worktree", "prune")
    if delete_branch:
        _git(ws.common_dir, "branch", "-D", "--end-of-options", ws.branch)


def linked(ws: Workspace) -> str | None:
    """The worktree's own git dir, when its ``.git`` is a plain file naming a folder of the recorded
    common dir's ``worktrees/`` whose ``gitdir`` names that ``.git`` back and whose ``commondir`` is
    the common dir; None otherwise (removed, a symlink, a folder, or leading anywhere else)."""
    dot = os.path.join(ws.path, ".git")
    gitdir = _pointer(dot, "gitdir: ")
    if gitdir is None:
        return None
    gitdir = os.path.realpath(gitdir)
    if os.path.dirname(gitdir) != os.path.realpath(os.path.join(ws.common_dir, "worktrees")):
        return None
    back = _pointer(os.path.join(gitdir, "gitdir"), "")
    common = _pointer(os.path.join(gitdir, "commondir"), "")
    if back is None or common is None or os.path.realpath(back) != os.path.realpath(dot):
        return None
    return gitdir if os.path.realpath(common) == os.path.realpath(ws.common_dir) else None


def _pointer(path: str, prefix: str) -> str | None:
    """The path a one-line git file names (relative to the file's folder), or None."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as f:
            text = os.fsdecode(f.read(_MAX_GITFILE).rstrip(b"\r\n"))
    except OSError:
        return None
    if not text.startswith(prefix) or "\n" in text or len(text) == len(prefix):
        return None
    return os.path.join(os.path.dirname(path), text[len(prefix) :])


def inside(ws: Workspace, gitdir: str) -> list[str]:
    return ["-C", ws.path, "--git-dir", gitdir, "--work-tree", ws.path]


def _status(ws: Workspace, gitdir: str, *, ignored: bool) -> tuple[list[str], list[str]] | None:
    """(changed paths — tracked and untracked —, ignored paths that hold something) or None when git
    failed. Submodules are not entered (their own config is not read): a changed submodule commit
    shows, its inner changes do not, and git will not remove a worktree holding one."""
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=dirty"]
    result = invoke.run(
        [*inside(ws, gitdir), *args, *(["--ignored=matching"] if ignored else [])], repository=ws.common_dir
    )
    if result.returncode != 0:
        return None
    changed: list[str] = []
    hidden: list[str] = []
    fields = iter(result.stdout.split("\0"))
    for entry in fields:
        code, path = entry[:2], entry[3:]
        if not path:
            continue
        if code == "!!":
            if _holds_anything(os.path.join(ws.path, path)):
                hidden.append(path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            continue
        changed.append(path)
        if "R" in code or "C" in code:
            next(fields, None)  # the rename's or copy's source
    return changed, hidden


def _holds_anything(path: str) -> bool:
    """Whether removing ``path`` loses anything: it is not a folder (a file, a link), or some folder
    under it holds something that is not a folder (an empty ignored ``out/`` loses nothing)."""
    if os.path.islink(path) or not os.path.isdir(path):
        return True
    folders = [path]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        return True
                    folders.append(entry.path)
        except OSError:
            return True  # cannot look inside: count it as something
    return False


def _resolve(common: str, ref: str) -> str:
    result = invoke.run(
        ["--git-dir", common, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        repository=common,
    )
    if result.returncode != 0:
        raise GitError(f"{ref!r} names no commit of the repository")
    return result.stdout.strip()


def _git(common: str, *args: str) -> str:
    return invoke.output(["--git-dir", common, *args], repository=common, private=(common,))

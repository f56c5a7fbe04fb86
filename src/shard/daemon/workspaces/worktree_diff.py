"""``workspace.diff``: a worktree's changes against its base, as git sees them (blocking: a worker
thread's, here or on the workspace's host through ``shard hosts git``).

The base is the merge-base of the worktree's HEAD with the integration target (the branch the work
is meant to land on, as it is now), or the commit the workspace was made from when git finds none.
It is compared with the working tree, so the agent's commits, its uncommitted edits and its
untracked files (not ignored ones) all show. Untracked files are added *intent-to-add* to a copy of
the worktree's index in a private temporary folder: the worktree's own index, objects and files are
not written.

Every git call goes through :mod:`invoke` (nothing the repository names runs: no hook, fsmonitor,
filter, textconv, diff driver or external diff), with ``--no-ext-diff --no-textconv`` besides and
every option of the output given on the command line, so nothing in the repository's configuration
can change what is parsed (``patch.py``). A symlink is diffed as git stores it — its target's text —
never followed. Files over ``BIG_FILE`` are not diffed (git's ``core.bigFileThreshold``): they are
listed, ``truncated``. Every output is read bounded.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from typing import Any

from shard.daemon.workspaces import git, invoke, patch
from shard.daemon.workspaces.model import MISSING, UNSAFE, Workspace

BIG_FILE = 1024 * 1024  # git diffs no file larger than this (it takes it for binary): listed, truncated
_MAX_INDEX = 256 * 1024 * 1024  # a worktree's index larger than this is not copied (read-tree instead)
_MAX_LIST = 8 * 1024 * 1024  # bytes of a file list read from git
_MAX_PATCH = 2 * patch.MAX_TOTAL_BYTES  # bytes of patch read from git (headers and context count too)
_ADD_BATCH = 200  # untracked paths per ``git add``

# Every option that shapes the output, on the command line: it beats the repository's configuration
# (diff.noprefix, diff.context, diff.relative, diff.orderFile, diff.algorithm, diff.renames …).
_OPTIONS = [
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--find-renames",
    "-l1000",
    "--ignore-submodules=dirty",  # a submodule is not entered: its own configuration is not read
    "--submodule=short",
    "--no-relative",
    "-U3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    f"-O{os.devnull}",
    "--src-prefix=a/",
    "--dst-prefix=b/",
]
_CONFIG = [
    ("core.bigFileThreshold", str(BIG_FILE)),
    ("diff.suppressBlankEmpty", "false"),  # no option for it: an empty context line stays " "
]


class _Git:
    """git inside one worktree, its repository's driver pins read once for the whole diff."""

    def __init__(self, ws: Workspace, gitdir: str) -> None:
        self.ws = ws
        self.inside = git.inside(ws, gitdir)
        self.pins = invoke.drivers(ws.common_dir)

    def run(self, *args: str, index: str | None = None) -> subprocess.CompletedProcess[str]:
        return invoke.run(
            [*self.inside, *args], repository=self.ws.common_dir, read=self.pins, index_file=index
        )

    def bounded(self, *args: str, limit: int, index: str) -> tuple[int, str, bool]:
        return invoke.bounded(
            [*self.inside, *args],
            repository=self.ws.common_dir,
            read=self.pins,
            limit=limit,
            config=_CONFIG,
            index_file=index,
        )

    def must(self, *args: str, index: str) -> None:
        result = self.run(*args, index=index)
        if result.returncode != 0:
            why = invoke.first_line(result.stderr, (self.ws.common_dir,))
            raise git.GitError("git could not read the worktree: " + why)

    def rev(self, name: str) -> str | None:
        found = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", name)
        return (found.stdout.strip() or None) if found.returncode == 0 else None


def diff(ws: Workspace) -> dict[str, Any]:
    """The answer's data: ``{workspace_id, base: {ref, commit}, head, files, truncated,
    total_files}``. Raises GitError (``conflict``) for a worktree that is gone or no longer git's."""
    if not os.path.isdir(ws.path):
        raise git.GitError(MISSING, conflict=True)
    gitdir = git.linked(ws)
    if gitdir is None:
        raise git.GitError(UNSAFE, conflict=True)
    g = _Git(ws, gitdir)
    head = g.rev("HEAD")
    if head is None:
        raise git.GitError("the worktree has no commit checked out", conflict=True)
    base, ref = _base(g, head)
    with tempfile.TemporaryDirectory(prefix="shard-diff-") as folder:
        index = os.path.join(folder, "index")
        _index_copy(g, gitdir, index)
        untracked, listed_all = _untracked(g, index)
        added = untracked[: patch.MAX_FILES + 1]
        for start in range(0, len(added), _ADD_BATCH):
            batch = added[start : start + _ADD_BATCH]
            g.must("--literal-pathspecs", "add", "--intent-to-add", "--", *batch, index=index)
        rev = ["--end-of-options", base, "--"]
        status, listing, list_cut = g.bounded(
            "diff", *_OPTIONS, "--raw", "--numstat", "-z", *rev, limit=_MAX_LIST, index=index
        )
        if status != 0:
            raise git.GitError("git could not compare the worktree with its base")
        entries = patch.parse_list(listing)
        status, text, patch_cut = g.bounded("diff", *_OPTIONS, "--patch", *rev, limit=_MAX_PATCH, index=index)
        if status != 0:
            raise git.GitError("git could not compare the worktree with its base")
    total = len(entries) + len(untracked) - len(added)
    too_large = {e.path for e in entries if e.added is None and _size(ws, e.path) > BIG_FILE}
    data = patch.answer(entries, patch.split_patch(text), total=total, cut=patch_cut, too_large=too_large)
    data["truncated"] = data["truncated"] or list_cut or not listed_all
    return {
        "workspace_id": ws.workspace_id,
        "base": {"ref": ref, "commit": base[:12]},
        "head": head[:12],
        "total_files": total,
        **data,
    }


def _base(g: _Git, head: str) -> tuple[str, str]:
    """(the base commit, the ref it is named by): the merge-base with the integration target, or the
    commit the workspace was made from (the target gone, or sharing no history with HEAD)."""
    ws = g.ws
    tip = g.rev(f"{ws.integration_target}^{{commit}}")
    if tip is not None:
        found = g.run("merge-base", "--end-of-options", head, tip)
        if found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip(), ws.integration_target
    return ws.base_sha, ws.base_ref


def _index_copy(g: _Git, gitdir: str, index: str) -> None:
    """The worktree's index copied to ``index`` (so git need not read every file again to compare
    it); when it cannot be — missing, not a regular file, too large — one made from HEAD."""
    try:
        fd = os.open(os.path.join(gitdir, "index"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_size <= _MAX_INDEX:
                with os.fdopen(fd, "rb", closefd=False) as src, open(index, "wb") as dst:
                    while block := src.read(1 << 20):
                        dst.write(block)
                # the index's own time too: git re-reads a file changed in the same second as the
                # index was written only when it can tell ("racy git"); a fresh time would hide it
                os.utime(index, ns=(info.st_atime_ns, info.st_mtime_ns))
                return
        finally:
            os.close(fd)
    g.must("read-tree", "HEAD", index=index)


def _untracked(g: _Git, index: str) -> tuple[list[str], bool]:
    """The untracked files that are not ignored, as git names them (a nested repository — a folder
    git lists with a ``/`` — is left out), and whether the whole list was read."""
    listing = ("ls-files", "--others", "--exclude-standard", "-z")
    status, out, cut = g.bounded(*listing, limit=_MAX_LIST, index=index)
    if status != 0:
        raise git.GitError("git could not list the worktree's untracked files")
    paths = out.split("\0")
    if cut or not out.endswith("\0"):
        paths = paths[:-1]  # the last one may be cut short
    else:
        paths.pop()
    return [p for p in paths if p and not p.endswith("/")], not cut


def _size(ws: Workspace, path: str) -> int:
    """The worktree file's size (a link's own), 0 when there is none."""
    try:
        return os.lstat(os.path.join(ws.path, path)).st_size
    except OSError:
        return 0

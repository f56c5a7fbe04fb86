"""Workspace projections (PROTOCOL §10.1a).

The protocol names what a projection carries but not every field's shape; the fields below are the
ones it names, all optional beyond ``workspace_id``, and extra fields pass through (§7). Filesystem
paths other than the worktree ``cwd`` and ``repository_cwd`` are deliberately absent.
"""

from typing import Any, Literal

from shard.protocol.base import WireModel
from shard.protocol.render import Hunk

BranchDisposition = Literal["delete_if_merged", "keep", "delete_confirmed"]


class WorkspaceSummary(WireModel):
    workspace_id: str
    label: str | None = None
    cwd: str | None = None
    repository_cwd: str | None = None
    ownership: str | None = None
    lifecycle: str | None = None
    fingerprints: dict[str, Any] | None = None
    branch: str | None = None
    base_ref: str | None = None
    integration_target: str | None = None
    created_at: int | float | None = None
    updated_at: int | float | None = None
    counts: dict[str, int] | None = None


class WorkspaceDetail(WorkspaceSummary):
    bindings: list[dict[str, Any]] | None = None
    tombstone: dict[str, Any] | None = None
    conflict: dict[str, Any] | None = None


class DiffBase(WireModel):
    ref: str  # the ref the base is named by: the integration target, or the ref the workspace was made from
    commit: str  # its commit, short


class FileDiff(WireModel):
    """One changed file of ``workspace.diff``: ``path`` relative to the worktree, '/'-separated;
    ``old_path`` for a rename. ``binary``: no hunks (git calls it binary); ``truncated``: its hunks
    were cut, or left out (over the size git diffs, or past the answer's bound)."""

    path: str
    status: Literal["added", "modified", "deleted", "renamed"]
    old_path: str | None = None
    added: int
    removed: int
    binary: bool | None = None
    truncated: bool | None = None
    hunks: list[Hunk]

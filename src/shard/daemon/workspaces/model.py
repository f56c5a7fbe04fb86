"""A workspace's durable record and its transport-safe projections (PROTOCOL §10.1a), pure.

A workspace is one git worktree on its own branch, made by the daemon for agents to work in apart
from the main checkout. Its record keeps what git needs — the worktree path, the repository's main
checkout and common dir, the branch, base and integration target — but a projection carries only
the worktree ``cwd`` and ``repository_cwd`` (the main checkout root, the same for every sibling): the
common dir, the git dir and every daemon path stay in the record (R10.1a.20 to R10.1a.22).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from shard.protocol.workspaces import WorkspaceDetail, WorkspaceSummary

Lifecycle = Literal["active", "missing", "retired"]
# Why a retirement is refused: the typed ``kind`` of its CONFLICT data (R10.1a.14)
Refusal = Literal["busy", "live", "dirty", "missing_authority", "unsafe", "retired", "confirmation_required"]
MAX_LABEL = 64
MAX_LISTED_IGNORED = 50  # ignored paths a refusal names (all are counted)
MISSING = "the worktree's directory is gone"
UNSAFE = "the directory is no longer a worktree git knows for this repository"


@dataclass(slots=True)
class Workspace:
    workspace_id: str
    label: str
    path: str  # the worktree: the one path a projection shows (as cwd)
    repository_cwd: str  # the main checkout's root: the grouping key a projection shows
    common_dir: str  # private: never in a projection
    branch: str
    base_ref: str
    base_sha: str
    integration_target: str
    created_at: float
    updated_at: float
    ownership: str = "managed"
    retired_at: float | None = None
    branch_deleted: bool = False
    disposition: str | None = None  # how the branch was disposed of at retirement
    conflict: dict[str, Any] | None = None  # the latest refusal or trouble, sanitized
    host: str | None = None  # the [[hosts]] machine its worktree is on; None: the daemon's own

    @property
    def retired(self) -> bool:
        return self.retired_at is not None


@dataclass(frozen=True, slots=True)
class Observed:
    """What git says of a workspace right now (``git.py``); None fields: not known."""

    exists: bool
    head: str | None = None
    dirty: int | None = None  # changed paths (tracked and untracked)
    registered: bool | None = None  # git's own worktree list names it


@dataclass(slots=True)
class Binding:
    agent_id: str
    session_id: str
    live: bool
    busy: bool


@dataclass(frozen=True, slots=True)
class View:
    """A workspace with what is known of it now: the agents bound to it and git's observation."""

    ws: Workspace
    bindings: list[Binding] = field(default_factory=list)
    seen: Observed | None = None

    @property
    def lifecycle(self) -> Lifecycle:
        if self.ws.retired:
            return "retired"
        return "missing" if self.seen is not None and not self.seen.exists else "active"


def summary(view: View) -> WorkspaceSummary:
    return WorkspaceSummary.model_validate(_summary_fields(view))


def detail(view: View) -> WorkspaceDetail:
    ws = view.ws
    fields = _summary_fields(view)
    fields["bindings"] = [
        {"agent_id": b.agent_id, "session_id": b.session_id, "live": b.live, "busy": b.busy}
        for b in view.bindings
    ]
    if ws.retired:
        fields["tombstone"] = {
            "retired_at": ws.retired_at,
            "branch_deleted": ws.branch_deleted,
            "branch_disposition": ws.disposition,
        }
    if ws.conflict is not None:
        fields["conflict"] = ws.conflict
    return WorkspaceDetail.model_validate(fields)


def _summary_fields(view: View) -> dict[str, Any]:
    ws, seen = view.ws, view.seen
    fingerprints: dict[str, Any] = {"base": ws.base_sha}
    if seen is not None and seen.head is not None:
        fingerprints["head"] = seen.head
    if seen is not None and seen.dirty is not None:
        fingerprints["dirty"] = seen.dirty > 0
    return {
        "workspace_id": ws.workspace_id,
        "label": ws.label,
        "cwd": ws.path,
        "repository_cwd": ws.repository_cwd,
        "ownership": ws.ownership,
        "lifecycle": view.lifecycle,
        "fingerprints": fingerprints,
        "branch": ws.branch,
        "base_ref": ws.base_ref,
        "integration_target": ws.integration_target,
        "created_at": ws.created_at,
        "updated_at": ws.updated_at,
        "counts": {
            "agents": len(view.bindings),
            "live_agents": sum(b.live for b in view.bindings),
            "changed_files": seen.dirty if seen is not None and seen.dirty is not None else 0,
        },
    }


def refusal(ws: Workspace, view: View, others_live: int) -> tuple[Refusal, str] | None:
    """Why ``ws`` may not be retired now, or None (R10.1a.14). ``others_live``: live agents working
    inside the worktree that are not bound to it (a subagent, an agent made there by hand)."""
    if ws.retired:
        return "retired", "the workspace is already retired"
    if any(b.busy for b in view.bindings):
        return "busy", "an agent of the workspace is working"
    live = sum(b.live for b in view.bindings) + others_live
    if live:
        return "live", f"{live} agent runtime(s) still run in the workspace; terminate them first"
    seen = view.seen
    if seen is None:
        return "missing_authority", "git could not be asked about the workspace"
    if seen.exists and seen.registered is False:
        return "unsafe", UNSAFE
    if seen.dirty:
        return "dirty", f"the worktree has {seen.dirty} changed or untracked path(s); commit or discard them"
    return None


def ignored_refusal(paths: list[str]) -> tuple[str, dict[str, Any]]:
    """The confirmation a retirement asks for before git-ignored files go with the worktree: the
    reason (no file named: it is told to everyone) and the typed data naming them for the caller —
    at most MAX_LISTED_IGNORED, relative to the worktree, all counted — and the field that confirms."""
    reason = (
        f"the worktree holds {len(paths)} git-ignored path(s) that retiring would delete; "
        "retry with discard_ignored: true to delete them"
    )
    data = {
        "confirmation_field": "discard_ignored",
        "ignored": paths[:MAX_LISTED_IGNORED],
        "ignored_total": len(paths),
    }
    return reason, data


_SLUG = re.compile(r"[^a-z0-9]+")


def slug(label: str) -> str:
    """A branch- and directory-safe form of a label."""
    return _SLUG.sub("-", label.lower()).strip("-")[:40] or "workspace"

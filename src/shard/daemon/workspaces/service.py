"""The ``workspace.*`` commands (PROTOCOL §10.1a, §10.2), sans-I/O: decisions here, git in a worker
thread (``effects.Offload`` → ``git.py``), records through the ``WorkspaceStore`` port, agents
through the desk.

* **Create** finds the repository of ``cwd``, adds a worktree on a new branch under the daemon's
  ``worktrees/`` folder, then commits the workspace and a fresh agent (daemon-made agent and session
  ids: a client cannot name either, R10.1a.15, R10.1a.16) in one transaction, and answers once the
  agent's runtime is up. **Attach** adds another fresh agent to an active workspace.
* **List / status** observe each workspace through git at the time of asking: a worktree deleted
  behind the daemon's back is ``missing``, one whose ``.git`` no longer leads to its record
  ``unsafe`` — each told once as ``workspace_conflict``, never an error.
* **Retire** is refused with typed data while any agent of it is busy or running (a live runtime
  whose cwd is inside the worktree counts, bound or not), while it has changes (tracked or
  untracked), when git cannot vouch for it (the repository gone: ``missing_authority``) or no longer
  lists it (``unsafe``). ``keep`` (the default) never deletes the branch; ``delete_if_merged`` deletes
  it only when git proves it reachable from the integration target, and otherwise answers
  ``confirmation_required``; ``delete_confirmed`` deletes it. git itself refuses to remove a worktree
  with changes; git-ignored files, which it would delete, are looked for just before and answered
  with ``confirmation_required`` naming them unless the command carries ``discard_ignored: true``.
* One git operation per workspace at a time, but for a read-only **diff** (``worktree_diff.py``); a
  command holds its connection until answered.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shard.daemon import wire
from shard.daemon.catalog import selection
from shard.daemon.desk import Department, Desk
from shard.daemon.effects import Client, Log, Offload
from shard.daemon.hosts.ssh import remote_cwd
from shard.daemon.lifecycle import ACTIVE_STATUSES
from shard.daemon.record import AgentRecord
from shard.daemon.workspaces import git
from shard.daemon.workspaces.model import (
    MAX_LABEL,
    MISSING,
    UNSAFE,
    Binding,
    Observed,
    View,
    Workspace,
    detail,
    ignored_refusal,
    refusal,
    slug,
    summary,
)
from shard.daemon.workspaces.ops import GitOps, LocalGit
from shard.daemon.workspaces.store import WorkspaceStore
from shard.protocol import commands as cmd
from shard.protocol import results
from shard.protocol.daemon_commands import WorkspaceDiff
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.events import WorkspaceAttached, WorkspaceConflict, WorkspaceCreated, WorkspaceRetired
from shard.protocol.ids import new_id
from shard.protocol.results import WorkspaceDetailResult, WorkspaceListResult, WorkspaceResult


class Workspaces(Department):
    def __init__(self, desk: Desk, store: WorkspaceStore) -> None:
        self.desk = desk
        self.store = store
        self.root: Path | None = None  # where worktrees go ($SHARD_HOME/worktrees; set by the shell)
        # the git of a workspace on another host (set by the shell; None: no host has workspaces)
        self.remote_git: Callable[[str], GitOps] | None = None
        self.items: dict[str, Workspace] = {w.workspace_id: w for w in store.load_workspaces()}
        self.in_git: set[str] = set()  # workspaces with a git operation under way

    def handle(self, client: Client, command: cmd.WorkspaceCommand) -> None:
        if isinstance(command, cmd.WorkspaceCreate):
            self._create(client, command)
        elif isinstance(command, cmd.WorkspaceAttach):
            self._attach(client, command)
        elif isinstance(command, cmd.WorkspaceList):
            self._list(client, command)
        elif isinstance(command, cmd.WorkspaceStatus):
            self._status(client, command)
        elif isinstance(command, cmd.WorkspaceRetire):
            self._retire(client, command)
        elif isinstance(command, WorkspaceDiff):
            self._diff(client, command)
        else:
            raise ShardError(ErrorCode.INVALID_REQUEST, f"'{command.type}' is not a workspace command")

    # --- create / attach ------------------------------------------------------------------------

    def _git(self, host: str | None) -> GitOps:
        """Where a workspace's git runs: here, or on its host."""
        if host is None:
            if self.root is None:
                raise ShardError(ErrorCode.INTERNAL_ERROR, "this daemon has no folder for worktrees")
            return LocalGit(self.root)
        if self.remote_git is None:
            raise ShardError(ErrorCode.INVALID_REQUEST, "this daemon makes no workspaces on other hosts")
        return self.remote_git(host)

    def _create(self, client: Client, c: cmd.WorkspaceCreate) -> None:
        catalog = self.desk.manifests.catalog()
        if catalog is not None:
            catalog.host(c.host)
        ops = self._git(c.host)
        cwd = self.desk.manifests.canonical_cwd(c.cwd) if c.host is None else remote_cwd(c.cwd)
        model = self._model(c)  # every choice checked before anything is made
        label = _label(c.label or c.branch or c.name or "workspace")
        ws_id = new_id("ws")

        def work() -> tuple[git.Repository, str, str, str, str, str]:
            repo = ops.discover(cwd)
            path = ops.worktree_path(repo, label, ws_id)
            branch = c.branch or f"shard/{slug(label)}-{ws_id[-6:]}"
            base_ref = c.base_ref or repo.branch or "HEAD"
            target = c.integration_target or repo.branch or base_ref
            ops.resolve(repo, target)  # a target that names nothing is refused before anything is made
            return repo, path, branch, base_ref, ops.create(repo, path, branch, base_ref), target

        def made(result: tuple[git.Repository, str, str, str, str, str]) -> None:
            repo, path, branch, base_ref, base_sha, target = result
            now = self.desk.now()
            ws = Workspace(
                ws_id,
                label,
                path,
                repo.main_root,
                repo.common_dir,
                branch,
                base_ref,
                base_sha,
                target,
                now,
                now,
                host=c.host,
            )
            record = self._record(ws, c, model)
            try:
                self.store.add_workspace(ws, record)
            except ShardError:  # nothing recorded: the fresh, empty worktree and branch go again
                self.desk.emit(Offload(lambda: ops.retire(ws, delete_branch=True), lambda _: None))
                raise
            self.items[ws.workspace_id] = ws
            self._start(client, c, ws, record, created=True)

        self._offload(client, c, work, made)

    def _attach(self, client: Client, c: cmd.WorkspaceAttach) -> None:
        ws = self._get(c.workspace_id)
        _not_retired(ws, "")
        self._busy(ws)
        model = self._model(c)

        def seen(observed: Observed | None) -> None:
            if observed is None or not observed.exists:
                why = "the worktree is missing" if observed else "git cannot vouch for the workspace"
                if observed is not None:
                    self._told(ws, "missing", MISSING)
                raise ShardError(ErrorCode.CONFLICT, why, _data("missing_authority", ws, why))
            if observed.registered is False:
                self._told(ws, "unsafe", UNSAFE)
                raise ShardError(ErrorCode.CONFLICT, UNSAFE, _data("unsafe", ws, UNSAFE))
            record = self._record(ws, c, model)
            self.desk.manifests.add(record)
            self._start(client, c, ws, record, created=False)

        ops = self._git(ws.host)
        self._offload(client, c, lambda: _observe(ops, ws), seen, ws)

    def _model(self, c: cmd.WorkspaceCreate | cmd.WorkspaceAttach) -> str | None:
        """The agent's model as a catalog id, with its provider and mode checked against the
        configuration's catalog (INVALID_REQUEST naming the field, before anything is made)."""
        catalog = self.desk.manifests.catalog()
        if catalog is None:
            return selection(c.model, c.provider)
        return catalog.check(c.model, c.provider, c.mode, None)

    def _record(
        self, ws: Workspace, c: cmd.WorkspaceCreate | cmd.WorkspaceAttach, model: str | None
    ) -> AgentRecord:
        return AgentRecord(
            agent_id=new_id("agent"),
            session_id=new_id("sess"),
            cwd=ws.path,
            name=c.name or c.title,
            model=model or self.desk.fallback_model,
            provider=c.provider,
            mode=c.mode,
            workspace_id=ws.workspace_id,
            host=ws.host,
            created_at=self.desk.now(),
        )

    def _start(
        self, client: Client, c: cmd.WorkspaceCommand, ws: Workspace, record: AgentRecord, *, created: bool
    ) -> None:
        b = self.desk
        slot = b.admit(record)
        shown_ws = detail(self._view(ws))
        if created:
            b.broadcast(WorkspaceCreated(workspace=shown_ws).to_json())
        else:
            b.broadcast(
                WorkspaceAttached(
                    workspace=shown_ws, agent_id=record.agent_id, session_id=record.session_id
                ).to_json()
            )
        result = WorkspaceResult(agent_id=record.agent_id, session_id=record.session_id, workspace=shown_ws)

        def started(error: ShardError | None) -> None:
            if error is None:
                b.send(client, wire.reply(c, result))
            else:
                error.data = {
                    **(error.data or {}),
                    "agent_id": record.agent_id,
                    "workspace_id": ws.workspace_id,
                }
                b.send(client, wire.failure(error, id=c.id, command=c.type))
            b.resume(client)

        b.ensure_running(slot, started)

    # --- list / status --------------------------------------------------------------------------

    def _list(self, client: Client, c: cmd.WorkspaceList) -> None:
        cwd = self.desk.manifests.canonical_cwd(c.cwd) if c.cwd is not None else None
        chosen = [w for w in self.items.values() if c.include_retired or not w.retired]

        here = self._git(None) if cwd is not None else None
        each = {w.workspace_id: self._git(w.host) for w in chosen if not w.retired}

        def work() -> tuple[str | None, dict[str, Observed | None]]:
            root = here.discover(cwd).main_root if here is not None and cwd is not None else None
            return root, {
                w.workspace_id: None if w.retired else _observe(each[w.workspace_id], w) for w in chosen
            }

        def seen(result: tuple[str | None, dict[str, Observed | None]]) -> None:
            root, observed = result
            views = [
                self._view(w, observed[w.workspace_id]) for w in chosen if root in (None, w.repository_cwd)
            ]
            for view in views:
                self._tell(view)
            views.sort(key=lambda v: (v.ws.repository_cwd, v.ws.created_at))  # grouped by repository
            self._answer(client, c, WorkspaceListResult(workspaces=[summary(v) for v in views]))

        self._offload(client, c, work, seen)

    def _status(self, client: Client, c: cmd.WorkspaceStatus) -> None:
        ws = self._get(c.workspace_id)

        def seen(observed: Observed | None) -> None:
            view = self._view(ws, observed)
            self._tell(view)
            self._answer(client, c, WorkspaceDetailResult(workspace=detail(view)))

        ops = self._git(ws.host)
        self._offload(client, c, lambda: None if ws.retired else _observe(ops, ws), seen)

    # --- diff -----------------------------------------------------------------------------------

    def _diff(self, client: Client, c: WorkspaceDiff) -> None:
        """The worktree against its base (``worktree_diff.py``, here or on the host), read-only."""
        ws = self._get(c.workspace_id)
        _not_retired(ws, ": its worktree is gone")
        ops = self._git(ws.host)  # asked now: an unknown host is this command's error

        def answered(found: dict[str, Any]) -> None:
            self._answer(client, c, results.WorkspaceDiffResult.model_validate(found))

        self._offload(client, c, lambda: ops.diff(ws), answered)

    # --- retire ---------------------------------------------------------------------------------

    def _retire(self, client: Client, c: cmd.WorkspaceRetire) -> None:
        ws = self._get(c.workspace_id)
        disposition = c.branch_disposition or "keep"
        self._busy(ws)
        ops = self._git(ws.host)

        def work() -> tuple[Observed | None, bool | None]:
            observed = _observe(ops, ws)
            proven = ops.merged(ws) if observed is not None and disposition == "delete_if_merged" else None
            return observed, proven

        def checked(result: tuple[Observed | None, bool | None]) -> None:
            observed, merged = result
            view = self._view(ws, observed)
            why = refusal(ws, view, self._others_live(ws))
            if why is not None:
                self._refuse(ws, *why)
            if disposition == "delete_if_merged" and not merged:
                reason = f"git cannot show branch {ws.branch} reachable from {ws.integration_target}"
                self._refuse(ws, "confirmation_required", reason, confirmation_disposition="delete_confirmed")
            delete = disposition != "keep"

            def remove() -> list[str]:
                try:
                    ops.retire(ws, delete_branch=delete, discard_ignored=bool(c.discard_ignored))
                except git.IgnoredFiles as found:  # looked for just before the removal: nothing removed
                    return found.paths
                return []

            self._offload(client, c, remove, removed, ws)

        def removed(ignored: list[str]) -> None:
            if ignored:
                reason, extra = ignored_refusal(ignored)
                self._refuse(ws, "confirmation_required", reason, **extra)
            done(disposition != "keep")

        def done(deleted: bool) -> None:
            now = self.desk.now()
            ws.retired_at, ws.updated_at, ws.branch_deleted = now, now, deleted
            ws.disposition, ws.conflict = disposition, None
            self.store.save_workspace(ws)
            shown_ws = detail(self._view(ws))
            self.desk.broadcast(WorkspaceRetired(workspace=shown_ws).to_json())
            self._answer(client, c, WorkspaceDetailResult(workspace=shown_ws))

        self._offload(client, c, work, checked, ws)

    def _refuse(self, ws: Workspace, kind: str, reason: str, **extra: Any) -> None:
        """CONFLICT with typed data; told to everyone as ``workspace_conflict`` (the reason is the
        daemon's own words: no path, no git output)."""
        self._conflict(ws, kind, reason)
        raise ShardError(
            ErrorCode.CONFLICT,
            f"workspace {ws.workspace_id} was not retired: {reason}",
            _data(kind, ws, reason, **extra),
        )

    def _tell(self, view: View) -> None:
        """What a look found wrong, told once: the worktree gone, or no longer git's for the record."""
        seen = view.seen
        if view.lifecycle == "missing":
            self._told(view.ws, "missing", MISSING)
        elif seen is not None and seen.exists and seen.registered is False:
            self._told(view.ws, "unsafe", UNSAFE)

    def _told(self, ws: Workspace, kind: str, reason: str) -> None:
        if ws.conflict is not None and ws.conflict.get("kind") == kind:
            return  # said once, not at every look
        self._conflict(ws, kind, reason)

    def _conflict(self, ws: Workspace, kind: str, reason: str) -> None:
        """Recorded on the workspace (a failed write is said, not raised) and told to everyone."""
        ws.conflict = {"kind": kind, "reason": reason, "at": self.desk.now()}
        try:
            self.store.save_workspace(ws)
        except ShardError as exc:
            self.desk.emit(Log(f"shard daemon: workspace {ws.workspace_id}: {exc.message}"))
        self.desk.broadcast(WorkspaceConflict(workspace=detail(self._view(ws)), reason=reason).to_json())

    # --- helpers --------------------------------------------------------------------------------

    def _offload(
        self,
        client: Client,
        c: cmd.WorkspaceCommand,
        work: Callable[[], Any],
        then: Callable[[Any], None],
        ws: Workspace | None = None,
    ) -> None:
        """``work`` in a worker thread, then ``then`` with its result as part of ``c``: a git failure
        is the command's error, and the connection's next command waits until this one is answered."""
        client.waiting = True
        if ws is not None:
            self.in_git.add(ws.workspace_id)

        def back(outcome: Any) -> None:
            if ws is not None:
                self.in_git.discard(ws.workspace_id)

            def go() -> None:
                if isinstance(outcome, git.GitError):
                    code = ErrorCode.CONFLICT if outcome.conflict else ErrorCode.INVALID_REQUEST
                    raise ShardError(code, outcome.message)
                if isinstance(outcome, BaseException):
                    raise ShardError(ErrorCode.INTERNAL_ERROR, f"{c.type} failed: {type(outcome).__name__}")
                then(outcome)

            self.desk.step(client, c, go)

        self.desk.emit(Offload(work, back))

    def _answer(self, client: Client, c: cmd.WorkspaceCommand, result: Any) -> None:
        self.desk.send(client, wire.reply(c, result))
        self.desk.resume(client)

    def _get(self, workspace_id: str) -> Workspace:
        ws = self.items.get(workspace_id)
        if ws is None:
            raise ShardError(ErrorCode.NOT_FOUND, f"no workspace {shown(workspace_id)}")
        return ws

    def _busy(self, ws: Workspace) -> None:
        if ws.workspace_id in self.in_git:
            why = f"workspace {ws.workspace_id} is busy with another command; retry"
            raise ShardError(ErrorCode.CONFLICT, why)

    def _view(self, ws: Workspace, seen: Observed | None = None) -> View:
        bindings = [
            Binding(
                s.agent_id, s.record.session_id, s.live, s.live and (s.busy or s.status in ACTIVE_STATUSES)
            )
            for s in self.desk.agents.values()
            if s.record.workspace_id == ws.workspace_id
        ]
        return View(ws, bindings, seen)

    def _others_live(self, ws: Workspace) -> int:
        inside = ws.path + os.sep
        return sum(
            1
            for s in self.desk.agents.values()
            if s.live
            and s.record.workspace_id != ws.workspace_id
            and (s.record.cwd + os.sep).startswith(inside)
        )


def _observe(ops: GitOps, ws: Workspace) -> Observed | None:
    try:
        return ops.observe(ws)
    except git.GitError:
        return None  # the repository is gone: nobody can vouch for the worktree


def _not_retired(ws: Workspace, why: str) -> None:
    if ws.retired:
        error = f"workspace {ws.workspace_id} is retired{why}"
        raise ShardError(ErrorCode.CONFLICT, error, _data("retired", ws, "it is retired"))


def _label(text: str) -> str:
    clean = unicodedata.normalize("NFKC", text).strip()
    if not clean or len(clean) > MAX_LABEL or any(unicodedata.category(ch).startswith("C") for ch in clean):
        raise ShardError(
            ErrorCode.INVALID_REQUEST, f"a workspace label must be 1 to {MAX_LABEL} printable characters"
        )
    return clean


def _data(kind: str, ws: Workspace, reason: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "workspace_id": ws.workspace_id, "reason": reason, **extra}

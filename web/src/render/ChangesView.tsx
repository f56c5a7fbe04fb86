// The Changes view: every file the open agent wrote or edited in its conversation, with its diffs
// (store/changes.ts); and for an agent made in a workspace, its worktree against the base
// (workspace.diff, folded by store/worktree.ts: asked when the view is shown, after each turn of the
// workspace ends, and on Refresh) with the Retire action and its dispositions (RetireDialog.tsx).
// Preact components on the store; the diffs themselves are drawn by render/diff.ts (text nodes only).
import { render } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { changesOf, type Edit } from "../store/changes";
import type { Store } from "../store/store";
import { diffTotals, type Disposition, type FileDiff, type WorkspaceState, type WorktreeDiff } from "../store/worktree";
import { renderHunks, twoSided, type Hunk } from "./diff";
import { RetireDialog } from "./RetireDialog";

type Request = (message: Record<string, unknown>) => Promise<{ success: boolean; data?: any; error?: { code?: string; message?: string; data?: any } }>; // eslint-disable-line @typescript-eslint/no-explicit-any

const STOPPED = new Set(["stopped", "failed"]);

/** What the view does on the socket; the state it reads and writes is the store's. */
export class ChangesPanel {
  constructor(
    private el: HTMLElement,
    readonly store: Store,
    private request: Request,
  ) {
    // shown (whoever unhid it) or another agent opened: the worktree is asked for when it must be
    new MutationObserver(() => this.follow()).observe(el, { attributes: true, attributeFilter: ["hidden"] });
    store.subscribe(() => this.follow());
  }

  /** The open agent's workspace, when it has one. */
  workspaceId(): string | null {
    const id = this.store.agent(this.store.state.selected)?.info.workspace_id;
    return typeof id === "string" ? id : null;
  }

  follow(): void {
    const id = this.workspaceId();
    if (this.el.hidden || !id || !this.store.offers("workspace-diff") || this.store.state.connection.state !== "connected") return;
    if (this.store.state.workspaces.wanted(id)) void this.load(id);
  }

  async load(id: string): Promise<void> {
    const worktrees = this.store.state.workspaces;
    const token = worktrees.asking(id);
    this.store.workspaceChanged();
    queueMicrotask(() => this.store.flush()); // "Asking git…" (this may run inside a flush)
    const needStatus = !worktrees.get(id).info.branch;
    let reply;
    try {
      reply = await this.request({ type: "workspace.diff", workspace_id: id });
    } catch (err) {
      reply = { success: false, error: { message: (err as Error).message } };
    }
    if (worktrees.answered(id, token, reply)) this.store.workspaceChanged();
    if (needStatus) await this.status(id);
    this.store.flush();
  }

  /** The workspace's label, branch and lifecycle (a page loaded after its events has none). */
  async status(id: string): Promise<void> {
    try {
      const reply = await this.request({ type: "workspace.status", workspace_id: id });
      if (reply.success && this.store.state.workspaces.event({ type: "workspace_status", workspace: reply.data.workspace })) this.store.workspaceChanged();
    } catch {
      /* dropped: the next refresh asks again */
    }
  }

  refresh(): void {
    const id = this.workspaceId();
    if (id) void this.load(id);
  }

  openRetire(): void {
    const id = this.workspaceId();
    if (!id) return;
    this.store.state.workspaces.retireOpened(id);
    this.store.workspaceChanged();
    this.store.flush();
  }

  closeRetire(id: string): void {
    this.closeDialog();
    this.store.state.workspaces.retireClosed(id);
    this.store.workspaceChanged();
    this.store.flush();
    this.focusLater(".worktree-retire");
  }

  // The modal is closed at once (the page is inert until it is), then drawn away with the state.
  private closeDialog(): void {
    (this.el.querySelector("dialog.retire") as HTMLDialogElement | null)?.close();
  }

  /** The focus back on the page once it is drawn (Preact draws a state change a moment later). */
  private focusLater(selector: string): void {
    setTimeout(() => (this.el.querySelector(selector) as HTMLElement | null)?.focus(), 0);
  }

  async retire(id: string, disposition: Disposition, discardIgnored = false): Promise<void> {
    const worktrees = this.store.state.workspaces;
    const command = worktrees.retireCommand(id, disposition, discardIgnored);
    this.store.workspaceChanged();
    this.store.flush();
    let reply;
    try {
      reply = await this.request(command);
    } catch (err) {
      reply = { success: false, error: { message: (err as Error).message } };
    }
    worktrees.retireAnswered(id, disposition, reply);
    this.store.workspaceChanged();
    this.store.flush();
    if (reply.success) {
      this.closeDialog();
      this.focusLater(".worktree-retired");
    }
  }

  /** Stops every running agent of the workspace (agent.terminate: graceful), for a retire refused
   * because one is live; the dialog then offers the choice again. */
  async stopAgents(id: string): Promise<void> {
    const live = [...this.store.state.agents.values()].filter((a) => a.info.workspace_id === id && !STOPPED.has(a.info.runtime_state || "running"));
    let stopped = 0;
    for (const agent of live) {
      try {
        const reply = await this.request({ type: "agent.terminate", agent_id: agent.id });
        if (reply.success) stopped += 1;
      } catch {
        /* the refusal will say it again */
      }
    }
    this.store.state.workspaces.agentsStopped(id, stopped);
    this.store.workspaceChanged();
    this.store.flush();
  }
}

function EditDiff({ edit }: { edit: Edit }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    box.current?.replaceChildren(...renderHunks(edit.hunks));
  }, [edit]);
  return <figure class={twoSided(edit.hunks) ? "render render-diff diff two-sided" : "render render-diff diff"} ref={box} data-tool-call-id={edit.toolCallId} />;
}

function Hunks({ hunks }: { hunks: Hunk[] }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    box.current?.replaceChildren(...renderHunks(hunks));
  }, [hunks]);
  return <figure class={twoSided(hunks) ? "render render-diff diff two-sided" : "render render-diff diff"} ref={box} />;
}

export function ChangesView({ store, panel }: { store: Store; panel: ChangesPanel }) {
  const [, redraw] = useState(0);
  useEffect(() => store.subscribe(() => redraw((n) => n + 1)), [store]);
  const agent = store.agent(store.state.selected);
  if (!agent) return null;
  const workspaceId = typeof agent.info.workspace_id === "string" ? agent.info.workspace_id : null;
  const files = changesOf(agent);
  const edits = files.length ? (
    <ul class="changes-list" aria-label="Files changed">
      {files.map((file) => (
        <li key={file.path} class="change" data-path={file.path}>
          <details>
            <summary>
              <code class="change-path">{file.path}</code> <span class="diff-stat">{`+${file.added} \u2212${file.removed}`}</span>{" "}
              <span class="change-edits">{file.edits.length === 1 ? "1 edit" : `${file.edits.length} edits`}</span>
            </summary>
            {file.edits.map((edit) => (
              <EditDiff key={edit.toolCallId} edit={edit} />
            ))}
          </details>
        </li>
      ))}
    </ul>
  ) : (
    <p class="changes-empty">No file written or edited in this conversation yet.</p>
  );
  if (!workspaceId) return edits;
  const ws = store.state.workspaces.get(workspaceId);
  return (
    <div class="changes-sections">
      <section class="changes-section conversation-edits" aria-labelledby="changes-edits-title">
        <h3 id="changes-edits-title" class="changes-title">This conversation's edits</h3>
        {edits}
      </section>
      {store.offers("workspace-diff") ? <Worktree ws={ws} panel={panel} /> : null}
      {ws.retire ? <RetireDialog ws={ws} panel={panel} /> : null}
    </div>
  );
}

function Worktree({ ws, panel }: { ws: WorkspaceState; panel: ChangesPanel }) {
  const data = ws.diff.data;
  const retired = ws.info.lifecycle === "retired";
  const title = data ? `Worktree against ${data.base.ref}` : "Worktree";
  // the same answer, the same list: the store's every flush (a streamed delta too) redraws this view
  const files = useMemo(() => (data ? <WorktreeFiles data={data} /> : null), [data]);
  return (
    <section class="changes-section worktree" aria-labelledby="worktree-title" data-state={retired ? "retired" : ws.diff.state}>
      <header class="worktree-head">
        <h3 id="worktree-title" class="changes-title">
          {title}
          {data ? <code class="worktree-base" title={`the merge-base of the branch with ${data.base.ref}`}>{` ${data.base.commit.slice(0, 8)}`}</code> : null}
        </h3>
        {ws.info.branch ? <span class="worktree-branch">branch <code>{ws.info.branch}</code></span> : null}
        {retired ? null : (
          <span class="worktree-actions">
            <button type="button" class="worktree-refresh" onClick={() => panel.refresh()} disabled={ws.diff.state === "loading"} title="Ask git again: the worktree may have changed">
              Refresh
            </button>
            <button type="button" class="worktree-retire danger" onClick={() => panel.openRetire()} aria-haspopup="dialog">
              Retire…
            </button>
          </span>
        )}
      </header>
      {retired ? (
        <p class="worktree-note worktree-retired" tabIndex={-1}>
          {retiredText(ws)}
        </p>
      ) : null}
      {!retired && ws.diff.state === "loading" ? <p class="worktree-note" role="status">Asking git…</p> : null}
      {!retired && ws.diff.state === "failed" ? <p class="worktree-note error">{ws.diff.error}</p> : null}
      {!retired ? files : null}
    </section>
  );
}

function retiredText(ws: WorkspaceState): string {
  const tomb = ws.info.tombstone;
  const branch = ws.info.branch ? `branch ${ws.info.branch}` : "its branch";
  if (!tomb) return "This workspace is retired: its worktree is gone.";
  return `This workspace is retired: its worktree is gone, ${branch} ${tomb.branch_deleted ? "deleted" : "kept"}.`;
}

function WorktreeFiles({ data }: { data: WorktreeDiff }) {
  if (!data.files.length) return <p class="changes-empty">No change against {data.base.ref} yet.</p>;
  const totals = diffTotals(data);
  return (
    <>
      <p class="worktree-summary">
        {totals.files === 1 ? "1 file changed" : `${totals.files} files changed`} <span class="diff-stat">{`+${totals.added} \u2212${totals.removed}`}</span>
        {data.truncated ? <span class="worktree-cut">{data.files.length < data.total_files ? ` — the first ${data.files.length} shown; the answer was cut` : " — some diffs were cut"}</span> : null}
      </p>
      <ul class="changes-list worktree-files" aria-label="Files changed in the worktree">
        {data.files.map((file) => (
          <WorktreeFile key={file.path} file={file} />
        ))}
      </ul>
    </>
  );
}

const STATUS_MARK: Record<FileDiff["status"], string> = { added: "A", modified: "M", deleted: "D", renamed: "R" };

function WorktreeFile({ file }: { file: FileDiff }) {
  const [open, setOpen] = useState(false);
  return (
    <li class={`change worktree-file status-${file.status}`} data-path={file.path}>
      <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
        <summary>
          <span class={`change-status status-${file.status}`} title={file.status}>
            <span aria-hidden="true">{STATUS_MARK[file.status] || "M"}</span>
            <span class="sr-only">{file.status}</span>
          </span>{" "}
          <code class="change-path">{file.old_path ? `${file.old_path} \u2192 ${file.path}` : file.path}</code>{" "}
          {file.binary ? <span class="change-edits">binary</span> : <span class="diff-stat">{`+${file.added} \u2212${file.removed}`}</span>}
        </summary>
        {open ? <FileBody file={file} /> : null}
      </details>
    </li>
  );
}

function FileBody({ file }: { file: FileDiff }) {
  if (file.binary) return <p class="worktree-note">A binary file: its changes are not shown.</p>;
  if (file.truncated && !file.hunks.length) return <p class="worktree-note">Too large to show here (over the size the daemon diffs, or past the answer's limit).</p>;
  if (!file.hunks.length) return <p class="worktree-note">{file.status === "renamed" ? "Renamed, content unchanged." : "No line changed (its mode changed)."}</p>;
  return (
    <>
      <Hunks hunks={file.hunks} />
      {file.truncated ? <p class="worktree-note">The rest of this file's diff was cut.</p> : null}
    </>
  );
}

export function mountChanges(el: HTMLElement, store: Store, request: Request): ChangesPanel {
  const panel = new ChangesPanel(el, store, request);
  render(<ChangesView store={store} panel={panel} />, el);
  return panel;
}

// A workspace agent's worktree as the Changes view shows it: the last workspace.diff answer (the
// worktree against its base, PROTOCOL §10.1a, capability workspace-diff), whether it is out of date
// (a turn of one of its agents ended since), the workspace's lifecycle from the daemon's broadcast
// events (workspace_retired reaches every tab), and the steps of a Retire with its dispositions.
// Apart from the page: the view asks what to send and hands back the answers.
import type { Hunk } from "../render/diff";
import type { Event } from "./wire";

export interface FileDiff {
  path: string;
  status: "added" | "modified" | "deleted" | "renamed";
  old_path?: string;
  added: number;
  removed: number;
  binary?: boolean;
  truncated?: boolean;
  hunks: Hunk[];
}

export interface WorktreeDiff {
  workspace_id: string;
  base: { ref: string; commit: string };
  head: string;
  files: FileDiff[];
  truncated: boolean;
  total_files: number;
}

export type Disposition = "keep" | "delete_if_merged" | "delete_confirmed";

/** Where a Retire is: choosing a disposition, waiting for the answer, asked to confirm (a branch
 * git cannot show merged, or git-ignored files that would go with the worktree), refused, done. */
export type RetireStep =
  | { step: "choosing"; note?: string }
  | { step: "sending"; disposition: Disposition }
  | { step: "confirm_branch"; reason: string }
  | { step: "confirm_ignored"; disposition: Disposition; reason: string; ignored: string[]; total: number }
  | { step: "refused"; kind: string; sentence: string };

export interface WorkspaceState {
  id: string;
  diff: { state: "idle" | "loading" | "shown" | "failed"; data?: WorktreeDiff; error?: string; stale: boolean };
  /** what the daemon's events said of the workspace (label, branch, lifecycle, tombstone …) */
  info: { label?: string; branch?: string; base_ref?: string; integration_target?: string; lifecycle?: string; tombstone?: { branch_deleted?: boolean; branch_disposition?: string | null } };
  retire: RetireStep | null;
}

interface Reply {
  success: boolean;
  data?: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the wire is open
  error?: { code?: string; message?: string; data?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export class Worktrees {
  items = new Map<string, WorkspaceState>();
  private asked = new Map<string, number>();
  private counter = 0;

  get(id: string): WorkspaceState {
    let ws = this.items.get(id);
    if (!ws) {
      ws = { id, diff: { state: "idle", stale: false }, info: {}, retire: null };
      this.items.set(id, ws);
    }
    return ws;
  }

  /** Whether ``id`` names a workspace this page knows was retired: its worktree folder is gone, so
   * its agents have nothing to start a runtime in (an attach would only fail). */
  retired(id: string | undefined): boolean {
    return !!id && this.items.get(id)?.info.lifecycle === "retired";
  }

  /** Whether the view should ask for the diff now: never asked, out of date, or failed before —
   * and not while an answer is awaited, nor for a retired workspace (it has no worktree). */
  wanted(id: string): boolean {
    const ws = this.get(id);
    if (ws.info.lifecycle === "retired" || ws.diff.state === "loading") return false;
    return ws.diff.state === "idle" || ws.diff.stale;
  }

  /** A workspace.diff is sent; its answer is kept only if no later one was asked meanwhile. */
  asking(id: string): number {
    const ws = this.get(id);
    ws.diff = { ...ws.diff, state: "loading", stale: false };
    this.counter += 1;
    this.asked.set(id, this.counter);
    return this.counter;
  }

  answered(id: string, token: number, reply: Reply): boolean {
    if (this.asked.get(id) !== token) return false;
    const ws = this.get(id);
    if (reply.success) ws.diff = { state: "shown", data: reply.data as WorktreeDiff, stale: ws.diff.stale };
    else {
      if (reply.error?.data?.kind === "retired") ws.info = { ...ws.info, lifecycle: "retired" };
      ws.diff = { ...ws.diff, state: "failed", error: reply.error?.message || "the daemon gave no reason" };
    }
    return true;
  }

  /** A turn of an agent in the workspace ended: what the worktree holds may have changed. */
  turnEnded(id: string): void {
    const ws = this.get(id);
    ws.diff = { ...ws.diff, stale: true };
  }

  /** A new connection: every diff shown may be out of date, and an answer still awaited on the
   * old one never comes (it is asked again). */
  reconnected(): void {
    for (const ws of this.items.values()) ws.diff = { ...ws.diff, state: ws.diff.state === "loading" ? "idle" : ws.diff.state, stale: true };
    this.asked.clear();
  }

  /** workspace_created / _attached / _retired / _conflict (broadcast to every connection). */
  event(ev: Event): string | null {
    const detail = ev.workspace as ({ workspace_id?: string } & WorkspaceState["info"]) | undefined;
    if (!detail || typeof detail.workspace_id !== "string") return null;
    const ws = this.get(detail.workspace_id);
    const { label, branch, base_ref, integration_target, lifecycle, tombstone } = detail;
    ws.info = { ...ws.info, ...defined({ label, branch, base_ref, integration_target, lifecycle, tombstone }) };
    if (ev.type === "workspace_retired") {
      ws.info.lifecycle = "retired";
      ws.retire = null; // retired, by this tab or another: nothing is left to choose
    }
    return ws.id;
  }

  // --- Retire ---------------------------------------------------------------------------------

  retireOpened(id: string): void {
    this.get(id).retire = { step: "choosing" };
  }

  retireClosed(id: string): void {
    this.get(id).retire = null;
  }

  /** The command a choice sends (the dialog's buttons: keep, delete_if_merged, "Delete anyway",
   * "Delete them too"), and the step it puts the dialog in. */
  retireCommand(id: string, disposition: Disposition, discardIgnored = false): Record<string, unknown> {
    this.get(id).retire = { step: "sending", disposition };
    const command: Record<string, unknown> = { type: "workspace.retire", workspace_id: id, branch_disposition: disposition };
    if (discardIgnored) command.discard_ignored = true;
    return command;
  }

  retireAnswered(id: string, disposition: Disposition, reply: Reply): void {
    const ws = this.get(id);
    if (reply.success) {
      ws.retire = null;
      const detail = reply.data?.workspace;
      if (detail) ws.info = { ...ws.info, lifecycle: "retired", tombstone: detail.tombstone };
      else ws.info.lifecycle = "retired";
      return;
    }
    if (ws.retire === null) return; // the dialog was closed meanwhile: nothing to ask
    const data = reply.error?.data || {};
    const reason = String(data.reason || reply.error?.message || "the daemon gave no reason");
    if (data.kind === "confirmation_required" && data.confirmation_disposition === "delete_confirmed") ws.retire = { step: "confirm_branch", reason };
    else if (data.kind === "confirmation_required" && data.confirmation_field === "discard_ignored")
      ws.retire = { step: "confirm_ignored", disposition, reason, ignored: (data.ignored || []).map(String), total: Number(data.ignored_total) || 0 };
    else ws.retire = { step: "refused", kind: String(data.kind || reply.error?.code || "error"), sentence: refusalSentence(String(data.kind || ""), reason) };
  }

  /** The live agents were asked to stop: back to the choice, saying so. */
  agentsStopped(id: string, stopped: number): void {
    const note = stopped
      ? `${stopped === 1 ? "Its agent was" : `${stopped} agents were`} stopped; choose again to retire.`
      : "No agent of this workspace was running here; another one working in its folder (a subagent, or one made there by hand) must be stopped from its own row.";
    this.get(id).retire = { step: "choosing", note };
  }
}

/** One clear sentence for a typed refusal of workspace.retire (PROTOCOL §10.1a). */
export function refusalSentence(kind: string, reason: string): string {
  switch (kind) {
    case "live":
      return "An agent still runs in this workspace: stop it first (Stop its agents below, or Terminate in its header), then retire.";
    case "busy":
      return "An agent of this workspace is working right now: wait for its turn to end, or abort it, then retire.";
    case "dirty":
      return `The worktree has changes nobody committed (${reason.replace(/^the worktree has /, "").replace(/; commit or discard them$/, "")}): commit or discard them — the agent can — then retire.`;
    case "missing_authority":
      return "Git cannot vouch for this workspace (its repository is gone), so it was not retired.";
    case "unsafe":
      return "The worktree's folder is no longer the one git knows for this repository, so it was not retired.";
    case "retired":
      return "This workspace is already retired.";
    default:
      return reason.endsWith(".") ? reason : `${reason}.`;
  }
}

/** "+3 −1" counts of a whole diff, and how many files. */
export function diffTotals(diff: WorktreeDiff): { files: number; added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const file of diff.files) {
    added += file.added;
    removed += file.removed;
  }
  return { files: diff.total_files, added, removed };
}

function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

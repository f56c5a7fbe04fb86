import { describe, expect, it } from "vitest";
import { Store } from "../src/store/store";
import { refusalSentence } from "../src/store/worktree";

const DIFF = {
  workspace_id: "ws-1",
  base: { ref: "main", commit: "abc123def456" },
  head: "fedcba987654",
  files: [{ path: "a.py", status: "modified", added: 1, removed: 1, hunks: [{ old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, lines: ["-x", "+y"] }] }],
  truncated: false,
  total_files: 1,
};
const DETAIL = { workspace_id: "ws-1", label: "fix", branch: "shard/fix-1", lifecycle: "active" };

function storeWithWorkspaceAgent(): Store {
  const store = new Store();
  store.upsert({ agent_id: "a", cwd: "/w", status: "idle", runtime_state: "running", workspace_id: "ws-1" });
  store.upsert({ agent_id: "b", cwd: "/p", status: "idle", runtime_state: "running" });
  return store;
}

describe("worktree diff", () => {
  it("is asked once, kept when it is the latest answer, and asked again after a turn of the workspace ends", () => {
    const store = storeWithWorkspaceAgent();
    const ws = store.state.workspaces;
    expect(ws.wanted("ws-1")).toBe(true);
    const first = ws.asking("ws-1");
    expect(ws.wanted("ws-1")).toBe(false); // an answer is awaited
    const second = ws.asking("ws-1");
    expect(ws.answered("ws-1", first, { success: true, data: { ...DIFF, head: "old" } })).toBe(false); // overtaken
    expect(ws.answered("ws-1", second, { success: true, data: DIFF })).toBe(true);
    expect(ws.get("ws-1").diff.state).toBe("shown");
    expect(ws.get("ws-1").diff.data?.files[0].path).toBe("a.py");
    expect(ws.wanted("ws-1")).toBe(false);
    store.receive({ type: "turn_end", agent_id: "b", turn_id: "t0", usage: { input: 1, output: 1 } }); // not of the workspace
    expect(ws.wanted("ws-1")).toBe(false);
    store.receive({ type: "turn_end", agent_id: "a", turn_id: "t1", usage: { input: 1, output: 1 } });
    expect(ws.get("ws-1").diff.stale).toBe(true);
    expect(ws.wanted("ws-1")).toBe(true);
    expect(ws.get("ws-1").diff.data).toBeTruthy(); // shown until the new answer comes
    const lost = ws.asking("ws-1");
    store.hello({ type: "hello", capabilities: ["workspace-diff"] }, 2); // the socket dropped meanwhile
    expect(ws.wanted("ws-1")).toBe(true);
    expect(ws.answered("ws-1", lost, { success: true, data: DIFF })).toBe(false);
  });

  it("says a failure, and a retired workspace is asked no more", () => {
    const store = storeWithWorkspaceAgent();
    const ws = store.state.workspaces;
    const token = ws.asking("ws-1");
    ws.answered("ws-1", token, { success: false, error: { code: "CONFLICT", message: "workspace ws-1 is retired: its worktree is gone", data: { kind: "retired" } } });
    expect(ws.get("ws-1").diff).toMatchObject({ state: "failed", error: "workspace ws-1 is retired: its worktree is gone" });
    expect(ws.get("ws-1").info.lifecycle).toBe("retired");
    expect(ws.wanted("ws-1")).toBe(false);
  });

  it("folds the workspace events every tab gets: a retirement closes an open Retire dialog", () => {
    const store = storeWithWorkspaceAgent();
    const ws = store.state.workspaces;
    let heard = 0;
    store.subscribe(() => (heard += 1));
    store.receive({ type: "workspace_created", workspace: DETAIL });
    expect(ws.retired("ws-1")).toBe(false);
    expect(ws.get("ws-1").info).toMatchObject({ label: "fix", branch: "shard/fix-1", lifecycle: "active" });
    ws.retireOpened("ws-1");
    store.receive({ type: "workspace_retired", workspace: { ...DETAIL, lifecycle: "retired", tombstone: { branch_deleted: false, branch_disposition: "keep" } } });
    store.flush();
    expect(heard).toBe(1);
    expect(ws.get("ws-1").info.lifecycle).toBe("retired");
    expect(ws.retired("ws-1")).toBe(true); // its agents are not attached again: their folder is gone
    expect(ws.retired("ws-2")).toBe(false);
    expect(ws.retired(undefined)).toBe(false);
    expect(ws.get("ws-1").info.tombstone?.branch_deleted).toBe(false);
    expect(ws.get("ws-1").retire).toBeNull();
    expect(ws.wanted("ws-1")).toBe(false);
    store.receive({ type: "workspace_conflict", workspace: { label: "no id" } }); // malformed: ignored
    expect(ws.items.size).toBe(1);
  });
});

describe("retire", () => {
  it("asks to confirm an unproven deletion, and retries with delete_confirmed", () => {
    const ws = storeWithWorkspaceAgent().state.workspaces;
    ws.retireOpened("ws-1");
    expect(ws.retireCommand("ws-1", "delete_if_merged")).toEqual({ type: "workspace.retire", workspace_id: "ws-1", branch_disposition: "delete_if_merged" });
    expect(ws.get("ws-1").retire).toEqual({ step: "sending", disposition: "delete_if_merged" });
    const reason = "git cannot show branch shard/fix-1 reachable from main";
    ws.retireAnswered("ws-1", "delete_if_merged", {
      success: false,
      error: { code: "CONFLICT", message: "…", data: { kind: "confirmation_required", workspace_id: "ws-1", reason, confirmation_disposition: "delete_confirmed" } },
    });
    expect(ws.get("ws-1").retire).toEqual({ step: "confirm_branch", reason });
    expect(ws.retireCommand("ws-1", "delete_confirmed").branch_disposition).toBe("delete_confirmed");
    ws.retireAnswered("ws-1", "delete_confirmed", { success: true, data: { workspace: { ...DETAIL, lifecycle: "retired", tombstone: { branch_deleted: true } } } });
    expect(ws.get("ws-1").retire).toBeNull();
    expect(ws.get("ws-1").info).toMatchObject({ lifecycle: "retired", tombstone: { branch_deleted: true } });
  });

  it("asks before git-ignored files go, and confirms with discard_ignored on the same disposition", () => {
    const ws = storeWithWorkspaceAgent().state.workspaces;
    ws.retireOpened("ws-1");
    ws.retireCommand("ws-1", "keep");
    ws.retireAnswered("ws-1", "keep", {
      success: false,
      error: { code: "CONFLICT", data: { kind: "confirmation_required", reason: "the worktree holds 2 git-ignored path(s)", confirmation_field: "discard_ignored", ignored: ["out/", ".env"], ignored_total: 2 } },
    });
    expect(ws.get("ws-1").retire).toEqual({ step: "confirm_ignored", disposition: "keep", reason: "the worktree holds 2 git-ignored path(s)", ignored: ["out/", ".env"], total: 2 });
    expect(ws.retireCommand("ws-1", "keep", true)).toEqual({ type: "workspace.retire", workspace_id: "ws-1", branch_disposition: "keep", discard_ignored: true });
  });

  it("says a typed refusal in one sentence, and after the agents were stopped offers the choice again", () => {
    const ws = storeWithWorkspaceAgent().state.workspaces;
    ws.retireOpened("ws-1");
    ws.retireCommand("ws-1", "keep");
    ws.retireAnswered("ws-1", "keep", { success: false, error: { code: "CONFLICT", data: { kind: "live", reason: "1 agent runtime(s) still run in the workspace; terminate them first" } } });
    const step = ws.get("ws-1").retire;
    expect(step).toMatchObject({ step: "refused", kind: "live" });
    expect(step && "sentence" in step && step.sentence).toMatch(/^An agent still runs in this workspace: stop it first/);
    ws.agentsStopped("ws-1", 1);
    expect(ws.get("ws-1").retire).toEqual({ step: "choosing", note: "Its agent was stopped; choose again to retire." });
    ws.agentsStopped("ws-1", 0); // a live runtime in the folder that is not the workspace's own
    expect(ws.get("ws-1").retire).toMatchObject({ step: "choosing", note: expect.stringMatching(/^No agent of this workspace was running here/) });
  });

  it("keeps nothing of an answer that comes after the dialog was closed but a retirement", () => {
    const ws = storeWithWorkspaceAgent().state.workspaces;
    ws.retireOpened("ws-1");
    ws.retireCommand("ws-1", "keep");
    ws.retireClosed("ws-1");
    ws.retireAnswered("ws-1", "keep", { success: false, error: { code: "CONFLICT", data: { kind: "dirty", reason: "x" } } });
    expect(ws.get("ws-1").retire).toBeNull();
  });

  it("words every refusal kind as one sentence", () => {
    const dirty = refusalSentence("dirty", "the worktree has 3 changed or untracked path(s); commit or discard them");
    expect(dirty).toBe("The worktree has changes nobody committed (3 changed or untracked path(s)): commit or discard them — the agent can — then retire.");
    for (const kind of ["busy", "missing_authority", "unsafe", "retired", "live"]) expect(refusalSentence(kind, "r").split(". ").length).toBe(1);
    expect(refusalSentence("", "the daemon's own words")).toBe("the daemon's own words.");
  });
});

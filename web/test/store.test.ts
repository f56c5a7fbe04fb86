import { describe, expect, it } from "vitest";
import { Store } from "../src/store/store";
import { isBusy } from "../src/store/agent";

function store(): Store {
  const s = new Store();
  s.hello({ type: "hello", client_id: "websocket-client-7", capabilities: ["agent-remove"] }, 1);
  s.upsert({ agent_id: "a", cwd: "/p", status: "idle", runtime_state: "running" });
  return s;
}

const sync = (extra: Record<string, unknown> = {}) => ({ type: "sync", agent_id: "a", status: "idle", mode: "build", capabilities: ["model-catalog"], live_window: { messages: [] }, runtime_epoch: 0, ...extra });
const models = { models: [{ id: "x/1" }], active: { id: "x/1" } };

describe("catalogs", () => {
  it("keeps an answer asked on the current connection and runtime epoch", () => {
    const s = store();
    s.receive(sync());
    expect(s.catalog(s.asking("a"), "models", models)).toBe(true);
    expect(s.state.catalogs.get("a")?.models?.active.id).toBe("x/1");
  });
  it("drops an answer asked before a replacement runtime took over (a newer runtime_epoch)", () => {
    const s = store();
    s.receive(sync());
    const asked = s.asking("a");
    s.receive(sync({ runtime_epoch: 1 }));
    expect(s.catalog(asked, "models", models)).toBe(false);
    expect(s.state.catalogs.get("a")).toBeUndefined();
  });
  it("drops an answer asked on an older connection", () => {
    const s = store();
    s.receive(sync());
    const asked = s.asking("a");
    s.hello({ type: "hello" }, 2);
    expect(s.catalog(asked, "models", models)).toBe(false);
  });
  it("forgets the catalogs of a runtime that was replaced", () => {
    const s = store();
    s.receive(sync());
    s.catalog(s.asking("a"), "models", models);
    s.receive(sync({ runtime_epoch: 1 }));
    expect(s.state.catalogs.get("a")).toBeUndefined();
  });
});

describe("requests", () => {
  it("a request is pending until it is resolved, whoever answered first", () => {
    const s = store();
    s.receive(sync());
    s.receive({ type: "permission_request", agent_id: "a", request_id: "r1", tool_name: "bash" });
    expect([...s.agent("a")!.requests.keys()]).toEqual(["r1"]);
    s.receive({ type: "permission_resolved", agent_id: "a", request_id: "r1", source: "unix-client-2", intent: "deny" });
    expect(s.agent("a")!.requests.size).toBe(0);
    s.receive({ type: "permission_resolved", agent_id: "a", request_id: "r1", source: "websocket-client-7", intent: "allow" }); // a late duplicate
    expect(s.agent("a")!.requests.size).toBe(0);
  });
  it("a sync's pending requests replace the ones held (one closed while away is gone)", () => {
    const s = store();
    s.receive({ type: "ui_request", agent_id: "a", request_id: "old", kind: "input" });
    s.receive(sync({ pending_requests: [{ request_id: "r2", kind: "confirm" }] }));
    expect([...s.agent("a")!.requests.values()].map((r) => [r.request_id, r.type])).toEqual([["r2", "ui_request"]]);
  });
  it("a notify is a toast, not a request to answer", () => {
    const s = store();
    s.receive({ type: "ui_request", agent_id: "a", request_id: "n", kind: "notify", message: "hi" });
    expect(s.agent("a")!.requests.size).toBe(0);
  });
});

describe("queue", () => {
  it("is replaced whole and keeps what was handed back until it is put back", () => {
    const s = store();
    const q = { queue_id: "q1", message: "then the tests", behavior: "follow_up" };
    s.receive({ type: "queue_changed", agent_id: "a", queue: [q], reason: "queued" });
    expect(s.agent("a")!.queue).toEqual([q]);
    s.receive({ type: "queue_changed", agent_id: "a", queue: [], returned: [q], reason: "aborted" });
    expect(s.agent("a")!.queue).toEqual([]);
    s.handBack("a", [q], "aborted"); // the page had no empty box to put it in
    expect(s.agent("a")!.returned).toEqual([{ ...q, reason: "aborted" }]);
    s.dismissReturned("a", s.agent("a")!.returned[0]);
    expect(s.agent("a")!.returned).toEqual([]);
  });
});

describe("agents", () => {
  it("a removed agent is forgotten, and closed if it was open", () => {
    const s = store();
    s.select("a");
    s.receive({ type: "agent_removed", agent_id: "a" });
    expect(s.agent("a")).toBeUndefined();
    expect(s.state.selected).toBeNull();
  });
  it("agent.list's answer forgets the agents the daemon no longer has", () => {
    const s = store();
    s.listed([{ agent_id: "b", cwd: "/q", status: "streaming" }]);
    expect([...s.state.agents.keys()]).toEqual(["b"]);
    expect(isBusy(s.agent("b")!)).toBe(true);
  });
  it("the overview's status reaches an agent this page does not attach", () => {
    const s = store();
    s.receive({ type: "agent_status_changed", agent_id: "a", status: "waiting_for_permission", runtime_state: "running" });
    expect(s.agent("a")!.info.status).toBe("waiting_for_permission");
  });
  it("tells its listeners which agents changed, once per flush", () => {
    const s = store();
    s.flush(); // what setting it up changed
    const seen: (string[] | null)[] = [];
    s.subscribe((changed) => seen.push(changed ? [...changed] : null));
    s.receive({ type: "status", agent_id: "a", status: "streaming" });
    s.receive({ type: "message_delta", agent_id: "a", message_id: "m", block_index: 0, kind: "text", text_delta: "x" });
    s.flush();
    s.flush();
    s.select("a");
    s.flush();
    expect(seen).toEqual([["a"], null]);
  });
  it("keeps the first prompt, which names an agent that has no other name", () => {
    const s = store();
    s.receive(sync({ live_window: { messages: [{ id: "u1", role: "user", content: [{ type: "text", text: "fix the flaky test\nin ci" }] }] } }));
    expect(s.agent("a")!.firstPrompt).toBe("fix the flaky test");
  });
});

describe("names", () => {
  it("says who an agent is without its id", async () => {
    const { agentName, groupByFolder, children } = await import("../src/store/names");
    const s = store();
    const a = s.agent("a")!;
    expect(agentName(a)).toBe("p (new agent)");
    s.receive(sync({ live_window: { messages: [{ id: "u1", role: "user", content: [{ type: "text", text: "fix the flaky test" }] }] } }));
    expect(agentName(a)).toBe("p: fix the flaky test");
    s.upsert({ agent_id: "c", cwd: "/p", status: "idle", parent_agent_id: "a", display_name: "reviewer · scout" });
    s.upsert({ agent_id: "d", cwd: "/q/", status: "idle", alias: "docs" });
    expect(agentName(s.agent("c")!)).toBe("reviewer · scout");
    expect(agentName(s.agent("d")!)).toBe("docs");
    expect(groupByFolder(s.state.agents.values()).map((g) => [g.cwd, g.roots.map((r) => r.id)])).toEqual([["/p", ["a"]], ["/q/", ["d"]]]);
    expect(children(s.state.agents.values(), "a").map((c) => c.id)).toEqual(["c"]);
  });

  it("keeps the same path on two machines apart, and says where each is", async () => {
    const { groupByFolder, whereAt } = await import("../src/store/names");
    const s = store();
    s.upsert({ agent_id: "far", cwd: "/p", status: "idle", host: "box" });
    const groups = groupByFolder(s.state.agents.values()).map((g) => [g.cwd, g.host ?? null, g.roots.map((r) => r.id)]);
    expect(groups).toEqual([["/p", null, ["a"]], ["/p", "box", ["far"]]]);
    expect(whereAt("/p", "box")).toBe("/p @box");
    expect(whereAt("/p")).toBe("/p");
  });
});

describe("status", () => {
  it("of an attached agent comes from its own stream: a late overview event does not put an old one back", () => {
    const s = store();
    s.setRole("a", "interactive");
    s.receive(sync({ status: "waiting_for_ui" }));
    s.receive({ type: "status", agent_id: "a", status: "idle" });
    s.receive({ type: "agent_activity", agent_id: "a", status: "waiting_for_ui", phase: "waiting" });
    expect(s.agent("a")!.info.status).toBe("idle");
    s.setRole("a", null); // watched no more: the overview is all this page hears
    s.receive({ type: "agent_status_changed", agent_id: "a", status: "streaming", runtime_state: "running" });
    expect(s.agent("a")!.info.status).toBe("streaming");
  });
});

describe("agent_changed", () => {
  it("replaces the agent's info: a rename shows, a cleared name goes", () => {
    const s = store();
    s.receive({ type: "agent_changed", agent_id: "a", info: { agent_id: "a", cwd: "/p", status: "idle", runtime_state: "running", name: "Fix it" } });
    expect(s.agent("a")?.info.name).toBe("Fix it");
    s.receive({ type: "agent_changed", agent_id: "a", info: { agent_id: "a", cwd: "/p", status: "idle", runtime_state: "running" } });
    expect(s.agent("a")?.info.name).toBeUndefined();
  });
  it("keeps the status an attached agent's own stream gave", () => {
    const s = store();
    s.setRole("a", "interactive");
    s.receive(sync({ status: "streaming" }));
    s.receive({ type: "status", agent_id: "a", status: "streaming" });
    const before = s.agent("a")!.info.status;
    s.receive({ type: "agent_changed", agent_id: "a", info: { agent_id: "a", cwd: "/p", status: "idle", runtime_state: "running", name: "n" } });
    expect(s.agent("a")!.info.status).toBe(before);
  });
  it("tells the capabilities the daemon offers", () => {
    const s = store();
    expect(s.offers("agent-remove")).toBe(true);
    expect(s.offers("fs-read")).toBe(false);
  });
});

describe("names", () => {
  it("prefers the name a person gave a subagent to its display name, and falls back when cleared", async () => {
    const { agentName } = await import("../src/store/names");
    const s = store();
    const child = s.upsert({ agent_id: "c", cwd: "/p", status: "idle", runtime_state: "running", parent_agent_id: "a", name: "scout", alias: "scout", display_name: "Explorer · scout" });
    expect(agentName(child)).toBe("Explorer · scout");
    s.receive({ type: "agent_changed", agent_id: "c", info: { ...child.info, name: "Look at the parser" } });
    expect(agentName(s.agent("c")!)).toBe("Look at the parser");
    const { name: _, ...cleared } = child.info;
    s.receive({ type: "agent_changed", agent_id: "c", info: cleared });
    expect(agentName(s.agent("c")!)).toBe("Explorer · scout");
  });
});

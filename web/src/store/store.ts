// The page's one store: every message from the daemon is folded here into the client's state —
// the agents (with their conversations, pending requests and queues), which one is open, the
// catalogs fetched for it, and the connection — apart from any DOM, so every rule of it is tested
// without a page (web/test). Views subscribe and re-render from the state; the store never calls
// into them.
import { foldAgent, newAgent, type AgentState } from "./agent";
import type { AgentInfo, Event, QueuedMessage } from "./wire";
import { Worktrees } from "./worktree";

export type ConnectionState = "connecting" | "connected" | "reconnecting" | "unenrolled" | "incompatible";

export interface Catalogs {
  models?: { models: { id: string; label?: string; [k: string]: unknown }[]; active: { id: string; [k: string]: unknown } };
  modes?: { modes: { name: string; description?: string }[]; active: string };
  levels?: { levels: { id: string; label?: string; description?: string }[]; active: string; model: { id: string } };
}

/** Who asked for a catalog: a reply is kept only when all three are still current (PROTOCOL §7). */
export interface Asked {
  generation: number;
  agentId: string;
  epoch: number | null;
}

export interface State {
  connection: { state: ConnectionState; text: string; generation: number; canRemove: boolean; capabilities: string[] };
  agents: Map<string, AgentState>;
  selected: string | null;
  catalogs: Map<string, Catalogs>;
  /** this tab's connection ids (hello.client_id): its answers read "you" */
  myIds: Set<string>;
  /** the worktrees of workspace agents: their diffs, lifecycles and retirements (store/worktree.ts) */
  workspaces: Worktrees;
}

type Listener = (changed: ReadonlySet<string> | null) => void;

export class Store {
  state: State = {
    connection: { state: "connecting", text: "Connecting…", generation: 0, canRemove: true, capabilities: [] },
    agents: new Map(),
    selected: null,
    catalogs: new Map(),
    myIds: new Set(),
    workspaces: new Worktrees(),
  };
  private listeners = new Set<Listener>();
  private changed = new Set<string>();
  private whole = false;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the listeners what changed since the last call (agent ids; null: anything). */
  flush(): void {
    if (!this.whole && !this.changed.size) return;
    const changed = this.whole ? null : new Set(this.changed);
    this.whole = false;
    this.changed.clear();
    for (const listener of this.listeners) listener(changed);
  }

  private touch(agentId: string | null): void {
    if (agentId === null) this.whole = true;
    else this.changed.add(agentId);
  }

  agent(id: string | null | undefined): AgentState | undefined {
    return id ? this.state.agents.get(id) : undefined;
  }

  // --- the connection ----------------------------------------------------------------------------

  connectionChanged(state: ConnectionState, text: string): void {
    this.state.connection = { ...this.state.connection, state, text };
    this.touch(null);
  }

  /** After every hello: this tab's id, the daemon's capabilities; bumps the generation. */
  hello(hello: Event, generation: number): void {
    if (hello.client_id) this.state.myIds.add(hello.client_id);
    const capabilities = Array.isArray(hello.capabilities) ? hello.capabilities.filter((c): c is string => typeof c === "string") : [];
    const canRemove = capabilities.includes("agent-remove");
    this.state.connection = { ...this.state.connection, generation, canRemove, capabilities };
    this.state.workspaces.reconnected(); // turns may have ended unheard while the socket was down
    this.touch(null);
  }

  /** agent.list's answer: every agent the daemon has; those this page knew and it lacks are gone. */
  listed(infos: AgentInfo[]): void {
    const live = new Set(infos.map((i) => i.agent_id));
    for (const info of infos) this.upsert(info);
    for (const id of [...this.state.agents.keys()]) if (!live.has(id)) this.forget(id);
  }

  upsert(info: AgentInfo): AgentState {
    let agent = this.state.agents.get(info.agent_id);
    if (!agent) {
      agent = newAgent(info);
      this.state.agents.set(agent.id, agent);
    } else {
      agent.info = { ...agent.info, ...info };
      if (info.model) agent.model = info.model;
      if (info.mode) agent.mode = info.mode;
      agent.version += 1;
    }
    this.touch(agent.id);
    return agent;
  }

  /** Whether the daemon offers a command family (hello.capabilities: "fs-read", "agent-rename" …). */
  offers(capability: string): boolean {
    return this.state.connection.capabilities.includes(capability);
  }

  /** agent_changed: the daemon's whole AgentInfo replaces the page's (a field it no longer has — a
   * name cleared — goes), except the status of an agent this page attached, whose own stream rules. */
  infoChanged(info: AgentInfo): AgentState {
    const agent = this.state.agents.get(info.agent_id);
    if (!agent) return this.upsert(info);
    const status = agent.role && agent.synced ? { status: agent.info.status } : {};
    agent.info = { ...info, ...status };
    agent.version += 1;
    this.touch(agent.id);
    return agent;
  }

  forget(id: string): void {
    if (!this.state.agents.delete(id)) return;
    this.state.catalogs.delete(id);
    if (this.state.selected === id) this.state.selected = null;
    this.touch(null);
  }

  select(id: string | null): void {
    this.state.selected = id && this.state.agents.has(id) ? id : null;
    this.touch(null);
  }

  setRole(id: string, role: string | null): void {
    const agent = this.state.agents.get(id);
    if (!agent) return;
    agent.role = role;
    agent.version += 1;
    this.touch(id);
  }

  /** Messages the agent handed back that wait for Put back (the page put them in no box). */
  handBack(id: string, items: QueuedMessage[], reason: string): void {
    const agent = this.state.agents.get(id);
    if (!agent) return;
    agent.returned = [...agent.returned, ...items.map((item) => ({ ...item, reason }))];
    agent.version += 1;
    this.touch(id);
  }

  /** A message handed back to this page has been put back into the box (or dismissed). */
  dismissReturned(id: string, item: unknown): void {
    const agent = this.state.agents.get(id);
    if (!agent) return;
    agent.returned = agent.returned.filter((r) => r !== item);
    agent.version += 1;
    this.touch(id);
  }

  // --- events ------------------------------------------------------------------------------------

  /** Folds one message from the daemon; the agent it concerns, if any. */
  receive(ev: Event): AgentState | undefined {
    switch (ev.type) {
      case "agent_spawned":
        return this.upsert(ev.info);
      case "agent_changed":
        return this.infoChanged(ev.info);
      case "agent_removed":
        this.forget(ev.agent_id!);
        return undefined;
      case "agent_status_changed":
        return this.patchInfo(ev.agent_id, { status: ev.status, runtime_state: ev.runtime_state });
      case "agent_activity": {
        const agent = this.patchInfo(ev.agent_id, { status: ev.status });
        if (agent) agent.activity = ev;
        return agent;
      }
      case "workspace_created":
      case "workspace_attached":
      case "workspace_retired":
      case "workspace_conflict":
        if (this.state.workspaces.event(ev)) this.touch(null);
        return undefined;
    }
    const agent = this.agent(ev.agent_id);
    if (!agent) return undefined;
    if (ev.type === "sync" && agent.epoch !== null && (ev.runtime_epoch ?? null) !== agent.epoch) this.state.catalogs.delete(agent.id); // a replacement runtime: its catalogs are asked again
    foldAgent(agent, ev);
    if (ev.type === "turn_end" && typeof agent.info.workspace_id === "string") {
      this.state.workspaces.turnEnded(agent.info.workspace_id);
      this.touch(null); // the Changes view follows the open agent, whichever agent of it worked
    }
    this.touch(agent.id);
    return agent;
  }

  // The overview's word on an agent (agent_status_changed, agent_activity: every page gets them).
  // For an agent this page attached, its own ordered stream (sync, status) is the authority on its
  // status: the overview's may be late, and would otherwise put back a status already left.
  private patchInfo(id: string | undefined, fields: Partial<AgentInfo>): AgentState | undefined {
    const agent = this.agent(id);
    if (!agent) return undefined;
    if (agent.role && agent.synced) delete fields.status;
    const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    agent.info = { ...agent.info, ...defined };
    agent.version += 1;
    this.touch(agent.id);
    return agent;
  }

  // --- workspaces ---------------------------------------------------------------------------------

  /** A workspace.diff answer, or a retire's, or a workspace.status's (folded as its events are). */
  workspaceChanged(): void {
    this.touch(null);
  }

  // --- catalogs ----------------------------------------------------------------------------------

  asking(agentId: string): Asked {
    return { generation: this.state.connection.generation, agentId, epoch: this.agent(agentId)?.epoch ?? null };
  }

  /** A list_* answer; dropped (false) when it was asked on an older connection or runtime_epoch. */
  catalog<K extends keyof Catalogs>(asked: Asked, kind: K, data: Catalogs[K]): boolean {
    const agent = this.agent(asked.agentId);
    if (!agent || asked.generation !== this.state.connection.generation || asked.epoch !== agent.epoch) return false;
    this.state.catalogs.set(agent.id, { ...(this.state.catalogs.get(agent.id) || {}), [kind]: data });
    this.touch(agent.id);
    return true;
  }
}

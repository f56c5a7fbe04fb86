// One agent as this page knows it: its AgentInfo (from agent.list and the overview events every
// page gets), and once attached what its own events say — the twin of the Python SDK's
// shard.client.agent.Agent for the part both fold (status, mode, capabilities, runtime_epoch,
// pending requests, queue, the conversation), held to the same recorded streams.
import { emptyTranscript, foldTranscript, type Transcript } from "./transcript";
import type { AgentInfo, Event, QueuedMessage, Request, Usage } from "./wire";

export const BUSY = new Set(["streaming", "waiting_for_permission", "waiting_for_ui", "compacting"]);

export interface Totals {
  input: number;
  output: number;
  cost: number;
}

export interface AgentState {
  id: string;
  info: AgentInfo;
  /** the agent's own status events (the SDK's Agent.status); null until attached */
  status: string | null;
  statusDetail: string | null;
  mode: string | null;
  model: string | null;
  /** "8,192 from the server": the model's context window and where it came from */
  window: string | null;
  capabilities: string[] | null;
  epoch: number | null;
  sessionId: string | null;
  synced: boolean;
  requests: Map<string, Request>;
  queue: QueuedMessage[];
  /** queued messages handed back (queue_changed.returned) that this page did not put straight into
   * the box (Store.handBack), with why; not yet put back or dismissed */
  returned: (QueuedMessage & { reason?: string })[];
  activity: Event | null;
  usage: Totals;
  /** "interactive" | "observer" | null: this page's attachment */
  role: string | null;
  transcript: Transcript;
  /** the first thing a person asked it (names the agent when nothing else does) */
  firstPrompt: string | null;
  /** bumped on every change of anything a view shows */
  version: number;
}

export function newAgent(info: AgentInfo): AgentState {
  return {
    id: info.agent_id,
    info,
    status: null,
    statusDetail: null,
    mode: info.mode || null,
    model: info.model || null,
    window: null,
    capabilities: null,
    epoch: null,
    sessionId: null,
    synced: false,
    requests: new Map(),
    queue: [],
    returned: [],
    activity: null,
    usage: { input: tokensIn(info.usage || {}), output: info.usage?.output || 0, cost: info.usage?.cost || 0 },
    role: null,
    transcript: emptyTranscript(),
    firstPrompt: null,
    version: 0,
  };
}

/** Every input token of a Usage: fresh, read from the provider's cache and written to it. */
export function tokensIn(u: Usage): number {
  return (u.input || 0) + (u.cache_read || 0) + (u.cache_write || 0);
}

const WINDOW_SOURCES: Record<string, string> = { config: "from config.toml", builtin: "from Shard's catalog", server: "from the server", default: "Shard's default" };

/** "8,192 from the server": a ModelDescriptor's (or usage event's) context window and its source. */
export function windowText(m: Usage | null | undefined): string | null {
  if (!m || !m.context_window) return null;
  const source = WINDOW_SOURCES[m.context_window_source || ""] || m.context_window_source || "";
  return `${m.context_window.toLocaleString("en-US")} ${source}`.trim();
}

export function isBusy(agent: AgentState): boolean {
  return BUSY.has(shownStatus(agent));
}

/** The status a person sees: the agent's own once attached, else the overview's. */
export function shownStatus(agent: AgentState): string {
  return agent.info.status;
}

/** Folds one of the agent's own events (one carrying its agent_id) into `agent`, in place. */
export function foldAgent(agent: AgentState, ev: Event): void {
  switch (ev.type) {
    case "sync": {
      agent.synced = true;
      agent.epoch = ev.runtime_epoch ?? null;
      agent.status = ev.status;
      agent.info = { ...agent.info, status: ev.status };
      agent.statusDetail = ev.status_detail ?? null;
      agent.mode = ev.mode ?? null;
      // no capabilities: no controls, never inferred from the protocol version (R9.1.10)
      agent.capabilities = ev.capabilities ?? null;
      if (ev.model) [agent.model, agent.window] = [ev.model.id, windowText(ev.model) || agent.window];
      agent.sessionId = ev.session_id || agent.sessionId;
      agent.requests = new Map();
      for (const req of ev.pending_requests || []) agent.requests.set(req.request_id, { ...req, type: req.type || (req.kind ? "ui_request" : "permission_request") });
      agent.queue = ev.queue || [];
      break;
    }
    case "status":
      agent.status = ev.status;
      agent.info = { ...agent.info, status: ev.status };
      agent.statusDetail = ev.detail ?? null; // a provider retry says so; the next status clears it
      break;
    case "mode_changed":
      agent.mode = ev.mode;
      break;
    case "model_changed":
      if (ev.capabilities) agent.capabilities = ev.capabilities; // absent: unchanged (R10.2.4)
      if (ev.active) [agent.model, agent.window] = [ev.active.id, windowText(ev.active)];
      break;
    case "permission_request":
    case "ui_request":
      if (ev.type === "ui_request" && ev.kind === "notify") break; // a toast, nothing to answer
      agent.requests = new Map(agent.requests).set(ev.request_id, ev as Request);
      break;
    case "permission_resolved":
    case "ui_resolved":
      if (agent.requests.has(ev.request_id)) {
        agent.requests = new Map(agent.requests);
        agent.requests.delete(ev.request_id);
      }
      break;
    case "queue_changed":
      agent.queue = ev.queue || []; // the whole queue: nothing to merge, nothing to miss
      break;
    case "usage":
      agent.usage = { input: agent.usage.input + tokensIn(ev as Usage), output: agent.usage.output + (ev.output || 0), cost: agent.usage.cost + (ev.cost || 0) };
      agent.window = windowText(ev as Usage) || agent.window;
      if (ev.model) agent.model = ev.model;
      break;
    case "agent_exited":
      agent.info = { ...agent.info, runtime_state: ev.runtime_state };
      break;
  }
  foldTranscript(agent.transcript, ev);
  if (!agent.firstPrompt) agent.firstPrompt = firstPromptOf(agent);
  agent.version += 1;
}

function firstPromptOf(agent: AgentState): string | null {
  const first = agent.transcript.messages.find((m) => m.role === "user" && m.content.some((b) => b.type === "text" && b.text));
  const text = first?.content.find((b) => b.type === "text")?.text;
  return text ? text.trim().split("\n")[0].slice(0, 80) : null;
}

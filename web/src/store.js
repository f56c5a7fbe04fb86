// What the page knows about each agent: its AgentInfo, live activity, the role of this page's
// attachment, its conversation DOM, its pending requests and its runtime's capabilities and epoch.
import { tokensIn, windowText } from "./dom.js";
import { Conversation } from "./render/conversation.js";

export const BUSY = new Set(["streaming", "waiting_for_permission", "waiting_for_ui", "compacting"]);

export class AgentState {
  constructor(info, onFork) {
    this.id = info.agent_id;
    this.info = info;
    this.activity = null; // last agent_activity phase (coarse, from the global overview)
    this.statusDetail = null; // what the agent says it waits for ("retrying in 2.5 s: …"), while it holds
    this.role = null; // "interactive" | "observer" | null (not attached)
    this.conversation = new Conversation((messageId) => onFork(this, messageId));
    this.requests = new Map(); // request_id -> permission_request | ui_request
    this.capabilities = [];
    this.epoch = null; // sync.runtime_epoch: catalogs fetched under an older one are discarded
    this.mode = info.mode || null;
    this.model = info.model || null;
    this.window = null; // the model's context window and where it came from ("8,192 from the server")
    this.sessionId = null;
    this.scroll = null; // scrollTop to return to when shown again; null: the bottom
    this.synced = false; // a sync arrived: the agent's state is known, its controls can show
    this.usage = { output: 0, cost: 0, ...(info.usage || {}), input: tokensIn(info.usage || {}) }; // cached included
    this.queue = []; // queued messages, in delivery order: replaced whole by sync and queue_changed
    this.returned = []; // queued messages handed back, not yet put back into the box (this page only)
  }

  get status() {
    return this.info.status;
  }

  get busy() {
    return BUSY.has(this.info.status);
  }

  get label() {
    return this.info.display_name || this.info.name || this.id;
  }

  applySync(sync) {
    this.synced = true;
    this.info.status = sync.status;
    this.statusDetail = sync.status_detail || null;
    this.mode = sync.mode;
    this.capabilities = sync.capabilities || [];
    if (sync.model) [this.model, this.window] = [sync.model.id, windowText(sync.model) || this.window];
    this.epoch = sync.runtime_epoch ?? null;
    this.sessionId = sync.session_id || this.sessionId;
    this.conversation.sync(sync.live_window);
    this.queue = sync.queue || [];
    const pending = new Set();
    for (const req of sync.pending_requests || []) {
      this.requests.set(req.request_id, { ...req, type: req.type || (req.kind ? "ui_request" : "permission_request") });
      pending.add(req.request_id);
    }
    for (const id of this.requests.keys()) if (!pending.has(id)) this.requests.delete(id);
  }

  applyQueue(change) {
    this.queue = change.queue || [];
  }

  addUsage(u) {
    this.usage.input += tokensIn(u);
    this.window = windowText(u) || this.window;
    this.usage.output += u.output || 0;
    this.usage.cost += u.cost || 0;
    if (u.model) this.model = u.model;
  }
}

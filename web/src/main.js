// The web client (issue 13): wires the connection, the per-agent state and the views together.
// One socket carries every agent; events are demuxed by agent_id. Only the selected agent is
// attached interactively; the others this page watches are attached as observers (R4.1.2.29).
import { confirmAction } from "./confirm.js";
import { Connection } from "./connection.js";
import { Controls } from "./controls.js";
import { h } from "./dom.js";
import { AgentList, idleReason } from "./render/agents.js";
import { permissionDialog, uiDialog } from "./render/requests.js";
import { resolutionText, statusWords } from "./words.js";
import { AgentState } from "./store.js";
import { Composer } from "./composer.js";
import { Sessions } from "./sessions.js";

const $ = (id) => document.getElementById(id);

class App {
  constructor() {
    this.agents = new Map();
    this.selected = null;
    this.myIds = new Set(remembered()); // this tab's connection ids (hello.client_id): its answers read "you"
    this.conn = new Connection({
      onOpen: (hello) => this.opened(hello),
      onMessage: (m) => this.dispatch(m),
      onState: (state, text) => this.connectionState(state, text),
    });
    this.list = new AgentList($("agents"), {
      onSelect: (id) => this.select(id),
      onWatch: (id, on) => this.watch(id, on),
      onTerminate: (id) => this.lifecycle("agent.terminate", id),
      onRemove: (id) => this.lifecycle("agent.remove", id),
    });
    this.controls = new Controls($("controls"), this.conn, (t, k) => this.toast(t, k));
    this.composer = new Composer(this);
    this.sessions = new Sessions(this);
    $("create").addEventListener("submit", (e) => this.create(e));
    $("terminate").addEventListener("click", () => this.lifecycle("agent.terminate"));
    $("kill").addEventListener("click", () => this.lifecycle("agent.kill"));
    $("compact").addEventListener("click", () => this.compact());
    $("reconnect").addEventListener("click", () => this.conn.drop());
    $("skip").addEventListener("click", (e) => {
      e.preventDefault(); // to the prompt when an agent is open, else to the new-agent form
      (this.selected ? $("prompt-text") : $("create").elements.cwd).focus();
    });
  }

  start() {
    this.conn.start();
  }

  connectionState(state, text) {
    const el = $("connection");
    el.dataset.state = state;
    el.textContent = text;
    $("reconnect").hidden = state !== "reconnecting";
    document.body.dataset.connection = state;
  }

  // After every hello: the registry, then re-attach to every agent this page watched.
  async opened(hello) {
    if (hello && hello.client_id) remember(this.myIds.add(hello.client_id));
    // Remove only where the daemon has agent.remove (an older one lacks it; PROTOCOL §7)
    this.list.canRemove = Boolean(hello && (hello.capabilities || []).includes("agent-remove"));
    let reply;
    try {
      reply = await this.conn.request({ type: "agent.list" });
    } catch {
      return;
    }
    if (!reply.success) return;
    const live = new Set();
    for (const info of reply.data.agents) {
      live.add(info.agent_id);
      this.upsertInfo(info);
    }
    for (const [id, agent] of this.agents) {
      if (!live.has(id)) this.forget(id);
      else if (agent.role) this.attach(agent, agent.role);
    }
  }

  upsertInfo(info) {
    let agent = this.agents.get(info.agent_id);
    if (!agent) {
      agent = new AgentState(info, (a, id) => this.sessions.fork(a, id));
      agent.conversation.mine = (answer) => this.myIds.has(answer.source);
      this.agents.set(agent.id, agent);
    } else {
      agent.info = { ...agent.info, ...info };
      if (info.model) agent.model = info.model;
      if (info.mode) agent.mode = info.mode;
    }
    this.refresh(agent);
    return agent;
  }

  forget(id) {
    this.agents.delete(id);
    this.list.remove(id);
    if (this.selected === id) this.show(null);
    else this.renderSelectedRequests(); // a removed child's requests leave its parent's panel
  }

  refresh(agent) {
    this.list.update(agent, agent.id === this.selected);
    if (agent.id === this.selected) this.renderHead(agent);
  }

  async attach(agent, role) {
    agent.role = role;
    try {
      const reply = await this.conn.request({ type: "agent.attach", agent_id: agent.id, role });
      if (!reply.success) {
        this.toast(`attach ${agent.label}: ${reply.error.message}`, "error");
        if (agent.role === role) agent.role = null;
      }
    } catch {
      /* dropped: the next hello re-attaches */
    }
    this.refresh(agent);
  }

  async select(id) {
    const previous = this.selected ? this.agents.get(this.selected) : null;
    const agent = this.agents.get(id);
    if (!agent || previous === agent) return;
    this.show(agent);
    if (previous && previous.role) this.attach(previous, "observer"); // interactive on one agent only
    if (previous) this.refresh(previous);
    await this.attach(agent, "interactive");
  }

  async watch(id, on) {
    const agent = this.agents.get(id);
    if (!agent || id === this.selected) return;
    if (on) return this.attach(agent, "observer");
    agent.role = null;
    this.refresh(agent);
    try {
      await this.conn.request({ type: "agent.detach", agent_id: id });
    } catch {
      /* a closed socket detached it already */
    }
  }

  show(agent) {
    // where the reader was in the conversation being left: at the bottom (null), or a scrollTop
    const leaving = this.selected ? this.agents.get(this.selected) : null;
    if (leaving && leaving !== agent) {
      const el = leaving.conversation.el;
      leaving.scroll = el.scrollHeight - el.scrollTop - el.clientHeight <= 80 ? null : el.scrollTop;
    }
    this.selected = agent ? agent.id : null;
    $("agent").hidden = !agent;
    $("empty").hidden = !!agent;
    $("sessions").hidden = true;
    if (!agent) return;
    const conversation = agent.conversation.el;
    $("conversation").replaceWith(Object.assign(conversation, { id: "conversation" }));
    conversation.scrollTop = agent.scroll ?? conversation.scrollHeight; // a re-inserted list starts at its top
    this.renderHead(agent);
    this.renderRequests(agent);
    this.composer.update(agent);
    for (const other of this.agents.values()) this.list.update(other, other === agent);
    if (agent.capabilities.length) this.controls.load(agent);
    else $("controls").replaceChildren();
  }

  renderHead(agent) {
    const model = [agent.model, agent.window && `window ${agent.window}`].filter(Boolean).join(", ");
    $("agent-title").textContent = `${agent.label} — ${agent.info.cwd}${model ? ` · ${model}` : ""}`;
    const status = $("agent-status");
    status.textContent = statusWords(agent.status);
    status.className = `badge status-${agent.status}`;
    const detail = $("agent-detail");
    detail.textContent = agent.statusDetail || "";
    detail.hidden = !agent.statusDetail;
    // compaction is a between-turn operation (CONFLICT mid-turn): offered once synced, when idle
    $("compact").hidden = !agent.synced;
    $("compact").disabled = agent.busy;
    // nothing to stop without a runtime: the buttons say why instead of answering "done"
    const runtime = agent.info.runtime_state || "running";
    for (const [id, what, title] of [["terminate", "terminate", "Stop its runtime now, or when its turn ends"], ["kill", "kill", "Stop its runtime at once, a running turn with it"]]) {
      const why = idleReason(runtime, what);
      $(id).disabled = why !== null;
      $(id).title = why || title;
    }
    this.composer.update(agent);
  }

  // --- events -----------------------------------------------------------------------------------

  dispatch(m) {
    switch (m.type) {
      case "agent_spawned":
        this.upsertInfo(m.info);
        return;
      case "agent_status_changed":
        return this.patch(m.agent_id, (a) => (a.info.status = m.status, a.info.runtime_state = m.runtime_state));
      case "agent_activity":
        return this.patch(m.agent_id, (a) => (a.activity = m, a.info.status = m.status));
      case "agent_removed":
        return this.forget(m.agent_id);
      case "agent_exited":
        return this.patch(m.agent_id, (a) => (a.info.runtime_state = m.runtime_state, a.conversation.note(`The runtime exited: ${m.reason}`, "error")));
      case "mode_changed":
        return this.patch(m.agent_id, (a) => this.controls.modeChanged(a, m));
    }
    const agent = m.agent_id ? this.agents.get(m.agent_id) : null;
    if (!agent) return;
    if (agent.id === this.selected) this.followBottom(agent.conversation.el);
    this.agentEvent(agent, m);
    if (m.type !== "message_delta") this.refresh(agent); // a delta changes nothing the list or head shows
  }

  // Keep the newest content in view while the reader is at the bottom: one layout read and one
  // scroll per frame, however many deltas arrive in it.
  followBottom(el) {
    if (this.scrollQueued || el.scrollHeight - el.scrollTop - el.clientHeight > 80) return;
    this.scrollQueued = true;
    requestAnimationFrame(() => {
      this.scrollQueued = false;
      el.scrollTop = el.scrollHeight;
    });
  }

  patch(id, change) {
    const agent = this.agents.get(id);
    if (!agent) return;
    change(agent);
    this.refresh(agent);
  }

  agentEvent(agent, m) {
    const conv = agent.conversation;
    const selected = agent.id === this.selected;
    switch (m.type) {
      case "sync":
        agent.applySync(m);
        if (selected) {
          this.renderRequests(agent);
          this.controls.load(agent);
        }
        return;
      case "status":
        agent.info.status = m.status;
        agent.statusDetail = m.detail || null; // a provider retry says so; the next status clears it
        return;
      case "message_delta":
        return conv.delta(m);
      case "message_complete":
        return conv.complete(m.message);
      case "tool_call":
        return conv.toolCall(m);
      case "tool_result":
        return conv.toolResult(m);
      case "turn_end":
        return conv.turnEnd(m);
      case "usage":
        return agent.addUsage(m);
      case "compaction":
        return conv.compaction(m);
      case "queue_changed":
        agent.applyQueue(m);
        if (m.returned?.length) this.composer.queue.handBack(agent, m.returned, m.reason);
        return;
      case "error":
        if (m.fatal) {
          // The runtime cannot go on (PROTOCOL §9.4): say so, and offer the one recovery there is —
          // a fresh runtime on the same durable session (the daemon restores it on attach).
          const restart = h("button", { type: "button", class: "recover", onclick: () => this.restart(agent) }, "Restart the agent");
          conv.note([`${m.code}: ${m.message} — the agent stopped. `, restart], "fatal");
        } else conv.note(`${m.code}: ${m.message}`, "error");
        return;
      case "model_changed":
        return this.controls.modelChanged(agent, m);
      case "reasoning_level_changed":
        return this.controls.reasoningChanged(agent, m);
      case "permission_request":
      case "ui_request":
        if (m.type === "ui_request" && m.kind === "notify") {
          this.toast(`${agent.label}: ${m.title || ""} ${m.message || ""}`.trim(), m.notify_type || "info");
          return;
        }
        agent.requests.set(m.request_id, m);
        this.renderSelectedRequests();
        return;
      case "permission_resolved":
      case "ui_resolved": {
        const req = agent.requests.get(m.request_id);
        agent.requests.delete(m.request_id);
        // a tool call's answer shows on its card (where a reload shows it too); any other as a note
        const call = m.type === "permission_resolved" && (m.tool_call_id || (req && req.tool_call_id));
        if (call) conv.answered(call, m);
        else if (req) conv.note(`${req.tool_name || req.title || req.kind}: ${resolutionText(m, req, this.myIds.has(m.source))}`, "resolved");
        this.renderSelectedRequests();
        return;
      }
    }
  }

  renderSelectedRequests() {
    const agent = this.selected ? this.agents.get(this.selected) : null;
    if (agent) this.renderRequests(agent);
  }

  // The selected agent's open requests, and those of its descendants (a background child with no
  // client of its own asks its nearest interactive ancestor, PROTOCOL §6.3): these say who asks.
  renderRequests(agent) {
    const panel = $("requests");
    const open = new Map();
    for (const other of this.agents.values()) {
      if (other === agent || this.descends(other, agent)) for (const req of other.requests.values()) open.set(req.request_id, [other, req]);
    }
    const shown = new Map([...panel.children].map((el) => [el.dataset.requestId, el]));
    for (const [id, el] of shown) if (!open.has(id)) el.remove();
    for (const [asker, req] of open.values()) {
      if (shown.has(req.request_id)) continue;
      const answer = (body) => this.answer(asker, req, body, dialog);
      const dialog = req.type === "ui_request" ? uiDialog(req, (value) => answer({ value })) : permissionDialog(req, answer, () => $("prompt-text").focus());
      if (asker !== agent) dialog.prepend(h("p", { class: "asker" }, `Asked by ${asker.label} (${asker.id})`));
      panel.append(dialog);
      dialog.querySelector("button, input, textarea")?.focus();
    }
  }

  descends(child, ancestor) {
    for (let seen = 0, at = child; at && seen < 16; seen++) {
      const parent = at.info.parent_agent_id;
      if (!parent) return false;
      if (parent === ancestor.id) return true;
      at = this.agents.get(parent);
    }
    return false;
  }

  answer(agent, req, body, dialog) {
    const type = req.type === "ui_request" ? "ui_response" : "permission_response";
    if (this.conn.send({ type, agent_id: agent.id, request_id: req.request_id, ...body })) {
      dialog.classList.add("answered");
      for (const b of dialog.querySelectorAll("button, input, textarea")) b.disabled = true;
    }
  }

  // --- commands ---------------------------------------------------------------------------------

  async create(event) {
    event.preventDefault();
    const form = new FormData(event.target);
    const fields = { cwd: form.get("cwd").trim() };
    for (const key of ["model", "mode"]) if (form.get(key).trim()) fields[key] = form.get(key).trim();
    $("create-error").textContent = "";
    try {
      const reply = await this.conn.request({ type: "agent.create", ...fields });
      if (!reply.success) {
        $("create-error").textContent = reply.error.message;
        return;
      }
      const id = reply.data.agent_id;
      if (!this.agents.has(id)) this.upsertInfo({ agent_id: id, cwd: fields.cwd, status: "idle", runtime_state: "running", created_at: 0, model: fields.model, mode: fields.mode });
      await this.select(id);
      $("prompt-text").focus();
    } catch (err) {
      $("create-error").textContent = err.message;
    }
  }

  async compact() {
    const agent = this.agents.get(this.selected);
    if (!agent) return;
    try {
      const reply = await this.conn.request({ type: "session_op", agent_id: agent.id, op: "compact" });
      if (!reply.success) this.toast(`compact: ${reply.error.message}`, "error");
      else if (!reply.data.compacted) this.toast(`Nothing to compact (${reply.data.reason})`, "info");
      else this.toast(`Compacted ${agent.label}: ${reply.data.tokens_before} → ${reply.data.tokens_after} tokens`, "info");
    } catch (err) {
      this.toast(`compact: ${err.message}`, "error");
    }
  }

  async restart(agent) {
    try {
      await this.conn.request({ type: "agent.kill", agent_id: agent.id });
    } catch {
      /* dropped: the reconnect re-attaches, which restores it */
    }
    await this.attach(agent, agent.id === this.selected ? "interactive" : "observer");
  }

  // Terminate, Kill and Remove, in words: Kill and Remove ask first; the toasts say what happened.
  async lifecycle(type, id = this.selected) {
    const agent = this.agents.get(id);
    if (!agent) return;
    if (type === "agent.kill" && !(await this.confirmKill(agent))) return;
    if (type === "agent.remove" && !(await this.confirmRemove(agent))) return;
    try {
      const reply = await this.conn.request({ type, agent_id: agent.id });
      if (reply.success) this.toast(doneText(type, reply.data), "info");
      else this.toast(`${FAILED[type]}: ${reply.error.message}`, "error");
    } catch (err) {
      this.toast(`${FAILED[type]}: ${err.message}`, "error");
    }
  }

  confirmKill(agent) {
    return confirmAction({
      title: `Kill ${agent.label}?`,
      lines: ["Its runtime stops at once, a running turn with it.", "The agent and its session are kept; a prompt starts it again."],
      action: "Kill",
    });
  }

  confirmRemove(agent) {
    const kids = [...this.agents.values()].filter((a) => this.descends(a, agent)).length;
    const running = idleReason(agent.info.runtime_state || "running", "stop") === null;
    return confirmAction({
      title: `Remove ${agent.label}${kids ? ` and its ${kids} subagent${kids > 1 ? "s" : ""}` : ""}?`,
      lines: [
        running ? "Its runtime is stopped first, a running turn with it." : null,
        "It leaves the agent list, for every client.",
        "Its session is kept: Sessions on an agent of the same folder opens it again.",
      ].filter(Boolean),
      action: "Remove",
    });
  }

  toast(text, kind = "info") {
    const el = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status" }, text, h("button", { type: "button", "aria-label": "Close", onclick: () => el.remove() }, "×"));
    $("toasts").append(el);
    setTimeout(() => el.remove(), 8000);
  }
}

// This tab's connection ids survive a reload (sessionStorage: this tab only), so its own answers
// still read "you" afterwards; the daemon numbers connections from a random point per process, so a
// later daemon never reuses one.
const KNOWN_IDS = "shard.clientIds";

function remembered() {
  try {
    const ids = JSON.parse(sessionStorage.getItem(KNOWN_IDS) || "[]");
    return Array.isArray(ids) ? ids.filter((id) => typeof id === "string") : [];
  } catch {
    return [];
  }
}

function remember(ids) {
  try {
    sessionStorage.setItem(KNOWN_IDS, JSON.stringify([...ids].slice(-100)));
  } catch {
    /* no storage (a private mode): "you" holds until the page is reloaded */
  }
}

const FAILED = { "agent.terminate": "Could not stop the agent", "agent.kill": "Could not kill the agent", "agent.remove": "Could not remove the agent" };

function doneText(type, data = {}) {
  if (type === "agent.kill") return "Agent killed";
  if (type === "agent.remove") {
    const more = (data.removed || []).length - 1;
    return more > 0 ? `Agent removed with its ${more} subagent${more > 1 ? "s" : ""}` : "Agent removed";
  }
  if (data.forgotten) return "Agent removed (it never ran; its session is kept)";
  return data.deferred ? "Agent stops when its turn ends" : "Agent stopped";
}

const app = new App();
window.shard = app; // for the console and the browser tests; holds no secret
app.start();

// The web client (issue 13, issue 29): wires the connection, the store and the views together.
// One socket carries every agent. Every message from the daemon goes to the store first (the state
// apart from the page, store/); then the views, Preact components on the store, redraw from it
// (the agent list, the conversation, the requests, the prompt box, the queue, Changes). Only the
// selected agent is attached interactively; the others this page watches are attached as
// observers (R4.1.2.29).
import { Connection } from "./connection.js";
import { lifecycle, type LifecycleCommand } from "./lifecycle";
import { CATALOGS, FOLDERS, OPEN, THEME, remember, remembered, store, stored, storedJson } from "./page_storage";
import { Controls } from "./controls.js";
import { h } from "./dom.js";
import { mountAgentList } from "./render/AgentList";
import { mountHead } from "./render/AgentHead";
import { mountChanges } from "./render/ChangesView";
import { mountRequests } from "./render/Requests";
import { ConversationPane, type View } from "./render/ConversationPane";
import { Composer } from "./composer";
import { CreateForm } from "./create_form";
import { HeadActions } from "./head_actions";
import { createCommand, createdAgent } from "./store/create";
import { recentFolders } from "./store/folders";
import { Sessions } from "./sessions.js";
import { Store } from "./store/store";
import { agentName } from "./store/names";
import type { AgentState } from "./store/agent";
import type { AgentInfo, Event, Request } from "./store/wire";

const $ = (id: string) => document.getElementById(id) as HTMLElement;

type AnyEl = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the views still in plain JS

export class App {
  store = new Store();
  conn: AnyEl;
  list: AnyEl;
  controls: AnyEl;
  composer: Composer;
  sessions: AnyEl;
  head: HeadActions;
  createForm: CreateForm;
  pane: ConversationPane;

  constructor() {
    for (const id of remembered()) this.store.state.myIds.add(id);
    this.conn = new Connection({
      onOpen: (hello: Event, generation: number) => this.opened(hello, generation),
      onMessage: (m: Event) => this.dispatch(m),
      onState: (state: string, text: string) => this.connectionState(state, text),
    });
    this.list = mountAgentList($("agents"), this.store, {
      onSelect: (id: string) => this.select(id),
      onWatch: (id: string, on: boolean) => this.watch(id, on),
      onTerminate: (id: string) => this.lifecycle("agent.terminate", id),
      onRemove: (id: string) => this.lifecycle("agent.remove", id),
    });
    this.controls = new Controls($("controls"), this.conn, (t: string, k: string) => this.toast(t, k), (agent: { id: string }, type: string, data: unknown) => this.catalogArrived(agent, type, data));
    this.pane = new ConversationPane(
      this.store,
      { fork: (agent, messageId) => this.fork(agent, messageId), restart: (agent) => this.restart(agent) },
      () => $("conversation"),
    );
    mountRequests($("requests"), this.store, {
      answer: (asker, req, body) => this.answer(asker, req, body),
      label: (agent) => this.label(agent),
      toPrompt: () => $("prompt-text").focus(),
      asked: this.pane.asked,
    });
    mountHead(this.store, (agent) => this.label(agent));
    this.composer = new Composer(this, $("composer"));
    this.sessions = new Sessions(this);
    const request = (m: Record<string, unknown>) => this.conn.request(m);
    this.head = new HeadActions(this.store, request, (t, k) => this.toast(t, k));
    this.createForm = new CreateForm(this.store, request);
    $("create").addEventListener("submit", (e) => this.create(e));
    $("terminate").addEventListener("click", () => this.lifecycle("agent.terminate"));
    $("kill").addEventListener("click", () => this.lifecycle("agent.kill"));
    $("compact").addEventListener("click", () => this.compact());
    $("reconnect").addEventListener("click", () => this.conn.drop());
    $("back").addEventListener("click", () => this.setView("list"));
    mountChanges($("changes"), this.store, request);
    $("changes-btn").addEventListener("click", () => {
      const open = $("changes").hidden;
      $("changes").hidden = !open;
      $("changes-btn").setAttribute("aria-expanded", String(open));
    });
    $("agent-search").addEventListener("input", (e) => this.list.search((e.target as HTMLInputElement).value));
    $("theme").addEventListener("click", () => this.setTheme(nextTheme(document.documentElement.dataset.theme)));
    $("notify").addEventListener("click", () => this.askToNotify());
    this.setTheme(stored(THEME) || "auto");
    $("notify").hidden = !("Notification" in window) || Notification.permission !== "default";
    this.fillCreateForm(storedJson(CATALOGS) || {});
    document.addEventListener("visibilitychange", () => this.updateTitle());
    $("skip").addEventListener("click", (e) => {
      e.preventDefault(); // to the prompt when an agent is open, else to the new-agent form
      (this.selected ? $("prompt-text") : ($("create") as HTMLFormElement).elements.namedItem("cwd") as HTMLElement).focus();
    });
  }

  /** The agents this page knows (the store's), by id. */
  get agents(): Map<string, AgentState> {
    return this.store.state.agents;
  }

  get selected(): string | null {
    return this.store.state.selected;
  }

  get myIds(): Set<string> {
    return this.store.state.myIds;
  }

  label(agent: AgentState): string {
    return agentName(agent);
  }

  /** each agent's conversation and where its reader was (the pane's; for the console and the bench) */
  get views(): Map<string, View> {
    return this.pane.views;
  }

  /** the agent whose conversation is in the page */
  get shown(): string | null {
    return this.pane.shown;
  }

  fork(agent: AgentState, messageId: string): Promise<void> {
    return this.sessions.fork(agent, messageId);
  }

  start(): void {
    this.conn.start();
  }

  connectionState(state: string, text: string): void {
    this.store.connectionChanged(state as never, text);
    const el = $("connection");
    el.dataset.state = state;
    el.textContent = text;
    $("reconnect").hidden = state !== "reconnecting";
    document.body.dataset.connection = state;
  }

  // After every hello: the registry, then re-attach to every agent this page watched.
  async opened(hello: Event, generation: number): Promise<void> {
    this.store.hello(hello, generation);
    this.head.offered();
    remember(this.myIds);
    let reply;
    try {
      reply = await this.conn.request({ type: "agent.list" });
    } catch {
      return;
    }
    if (!reply.success) return;
    const before = new Set(this.agents.keys());
    this.store.listed(reply.data.agents as AgentInfo[]);
    for (const id of before) if (!this.agents.has(id)) this.forgotten(id);
    this.store.flush();
    for (const agent of this.agents.values()) if (agent.role) this.attach(agent, agent.role);
    this.fillRecentFolders();
    void this.createForm.loadHosts();
    // the first hello of a reloaded page: the agent that was open opens again
    const reopen = this.reopen;
    this.reopen = null;
    if (reopen && !this.selected && this.agents.has(reopen)) await this.select(reopen);
    this.updateTitle();
  }

  /** the agent open before a reload (this tab's), to reopen after the first agent.list */
  reopen: string | null = stored(OPEN);

  // --- the page around the conversation ----------------------------------------------------------

  /** On a phone the agent list and the conversation are two views (app.css); elsewhere both show. */
  setView(view: "list" | "conversation"): void {
    document.body.dataset.view = view;
  }

  setTheme(theme: string): void {
    if (theme === "auto") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    store(THEME, theme === "auto" ? null : theme);
    $("theme").setAttribute("aria-label", `Theme: ${theme === "auto" ? "automatic" : theme} (change)`);
    $("theme").title = `Theme: ${theme === "auto" ? "as the system" : theme}`;
  }

  // A catalog the selected agent's pickers fetched: kept by the store (under its epoch guard) and
  // offered by the new-agent form (every agent of one daemon has the same models and modes).
  catalogArrived(agent: { id: string }, type: string, data: unknown): void {
    const kind = type === "list_models" ? "models" : type === "list_modes" ? "modes" : "levels";
    this.store.catalog(this.store.asking(agent.id), kind, data as never);
    if (kind === "levels") return;
    const saved = { ...(storedJson(CATALOGS) || {}), [kind]: data };
    store(CATALOGS, JSON.stringify(saved));
    this.fillCreateForm(saved);
  }

  fillCreateForm(catalogs: { models?: { models: { id: string; label?: string }[] }; modes?: { modes: { name: string; description?: string }[] } }): void {
    const form = $("create") as HTMLFormElement;
    const fill = (name: string, options: [string, string, string?][]) => {
      const select = form.elements.namedItem(name) as HTMLSelectElement;
      const value = select.value;
      select.replaceChildren(h("option", { value: "" }, "default"), ...options.map(([v, label, title]) => h("option", { value: v, title }, label)));
      select.value = options.some(([v]) => v === value) ? value : "";
    };
    if (catalogs.models) fill("model", catalogs.models.models.map((m) => [m.id, m.id, m.label]));
    if (catalogs.modes) fill("mode", catalogs.modes.modes.map((m) => [m.name, m.name, m.description]));
  }

  // The folders of the agents known and of those made here, newest first, as completions.
  fillRecentFolders(): void {
    this.createForm.setRecent(recentFolders([...this.agents.values()].map((a) => a.info.cwd), storedJson(FOLDERS) || []));
  }

  // "(2) Shard" while agents this page is not showing wait for an answer; a notification too when
  // the tab is hidden and the person turned them on.
  updateTitle(): void {
    const waiting = [...this.agents.values()].filter((a) => a.id !== this.selected && (a.requests.size > 0 || WAITING.has(a.info.status))).length;
    document.title = waiting ? `(${waiting}) Shard` : "Shard";
  }

  // Every page hears every agent's status (the overview), watched or not: one that starts waiting
  // for an answer is a notification when it is not in view (or the tab is hidden), once per agent
  // until it is answered (the tag replaces an older one).
  notifyWaiting(agent: AgentState): void {
    if (!document.hidden && agent.id === this.selected) return;
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    const what = agent.info.status === "waiting_for_permission" ? "asks for permission" : "asks you something";
    const note = new Notification(`${this.label(agent)} needs an answer`, { body: `${this.label(agent)} ${what}.`, tag: agent.id });
    note.onclick = () => {
      window.focus();
      this.select(agent.id);
      note.close();
    };
  }

  async askToNotify(): Promise<void> {
    const answer = await Notification.requestPermission();
    $("notify").hidden = answer !== "default";
  }

  upsertInfo(info: AgentInfo): AgentState {
    const agent = this.store.upsert(info);
    this.store.flush();
    return agent;
  }

  /** The store forgot `id` (removed, or gone from agent.list): its row, view and dialogs go. */
  forgotten(id: string): void {
    this.pane.forget(id);
    this.store.flush();
    if (this.shown === id) this.show(null);
  }

  async attach(agent: AgentState, role: string): Promise<void> {
    if (this.store.state.workspaces.retired(agent.info.workspace_id)) {
      // its folder went with the workspace: watching it would only try (and fail) to start it there
      this.store.setRole(agent.id, null);
      this.store.flush();
      return;
    }
    this.store.setRole(agent.id, role);
    try {
      const reply = await this.conn.request({ type: "agent.attach", agent_id: agent.id, role });
      if (!reply.success) {
        this.toast(`attach ${this.label(agent)}: ${reply.error.message}`, "error");
        if (agent.role === role) this.store.setRole(agent.id, null);
      }
    } catch {
      /* dropped: the next hello re-attaches */
    }
    this.store.flush();
  }

  async select(id: string): Promise<void> {
    const previous = this.selected ? this.agents.get(this.selected) : undefined;
    const agent = this.agents.get(id);
    if (!agent || previous === agent) return;
    this.show(agent);
    if (previous && previous.role) this.attach(previous, "observer"); // interactive on one agent only
    await this.attach(agent, "interactive");
  }

  async watch(id: string, on: boolean): Promise<void> {
    const agent = this.agents.get(id);
    if (!agent || id === this.selected) return;
    if (on) return this.attach(agent, "observer");
    this.store.setRole(id, null);
    this.store.flush();
    try {
      await this.conn.request({ type: "agent.detach", agent_id: id });
    } catch {
      /* a closed socket detached it already */
    }
  }

  show(agent: AgentState | null): void {
    this.pane.show(agent);
    this.store.select(agent ? agent.id : null);
    store(OPEN, agent ? agent.id : null); // a reload reopens it
    this.setView(agent ? "conversation" : "list");
    this.updateTitle(); // the agent now in view no longer counts
    $("agent").hidden = !agent;
    $("empty").hidden = !!agent;
    $("sessions").hidden = true;
    this.head.agentShown();
    this.store.flush();
    if (!agent) return;
    if (agent.capabilities?.length) this.controls.load(agent);
    else $("controls").replaceChildren();
  }

  // --- events -----------------------------------------------------------------------------------

  dispatch(m: Event): void {
    this.pane.before(m);
    const agent = this.store.receive(m); // the state first; then the views
    if (agent && m.agent_id && !OVERVIEW.has(m.type)) this.agentEvent(agent, m);
    this.store.flush();
    switch (m.type) {
      case "agent_spawned":
      case "agent_changed":
      case "agent_status_changed":
      case "agent_activity":
        if (m.type === "agent_status_changed") {
          this.updateTitle();
          if (agent && WAITING.has(m.status)) this.notifyWaiting(agent);
        }
        return;
      case "agent_removed":
        return this.forgotten(m.agent_id!);
      case "mode_changed":
        if (agent) this.controls.modeChanged(agent, m);
        return;
    }
  }

  // What one of the agent's own events does beside the state the store folded: the conversation
  // follows it (and notes what is no state), and what is said outside the conversation is said.
  agentEvent(agent: AgentState, m: Event): void {
    this.pane.event(agent, m);
    const selected = agent.id === this.selected;
    switch (m.type) {
      case "sync":
        if (selected) this.controls.load(agent);
        return;
      case "queue_changed":
        if (m.returned?.length) this.composer.queue.handBack(agent, m.returned, m.reason);
        return;
      case "model_changed":
        return this.controls.modelChanged(agent, m);
      case "reasoning_level_changed":
        return this.controls.reasoningChanged(agent, m);
      case "ui_request":
        if (m.kind === "notify") this.toast(`${this.label(agent)}: ${m.title || ""} ${m.message || ""}`.trim(), m.notify_type || "info");
        else this.updateTitle();
        return;
      case "permission_request":
      case "permission_resolved":
      case "ui_resolved":
        return this.updateTitle();
    }
  }

  /** Sends a request's answer; whether it went. */
  answer(agent: AgentState, req: Request, body: Record<string, unknown>): boolean {
    const type = req.type === "ui_request" ? "ui_response" : "permission_response";
    return this.conn.send({ type, agent_id: agent.id, request_id: req.request_id, ...body });
  }

  // --- commands ---------------------------------------------------------------------------------

  async create(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const field = (key: string) => String(form.get(key) || "");
    const fields = createCommand({
      cwd: field("cwd"),
      model: field("model"),
      mode: field("mode"),
      sandbox: field("sandbox"),
      workspace: form.get("workspace") === "on",
      host: field("host"),
    });
    $("create-error").textContent = "";
    try {
      const reply = await this.conn.request(fields);
      if (!reply.success) {
        $("create-error").textContent = reply.error.message;
        return;
      }
      const id = createdAgent(reply.data);
      if (!id) return;
      store(FOLDERS, JSON.stringify([fields.cwd, ...(storedJson(FOLDERS) || []).filter((f: string) => f !== fields.cwd)].slice(0, 20)));
      this.fillRecentFolders();
      if (!this.agents.has(id))
        this.upsertInfo({ agent_id: id, cwd: fields.cwd, status: "idle", runtime_state: "running", created_at: 0, model: fields.model, mode: fields.mode, host: fields.host });
      await this.select(id);
      $("prompt-text").focus();
    } catch (err) {
      $("create-error").textContent = (err as Error).message;
    }
  }

  async compact(): Promise<void> {
    const agent = this.selected ? this.agents.get(this.selected) : undefined;
    if (!agent) return;
    try {
      const reply = await this.conn.request({ type: "session_op", agent_id: agent.id, op: "compact" });
      if (!reply.success) this.toast(`compact: ${reply.error.message}`, "error");
      else if (!reply.data.compacted) this.toast(`Nothing to compact (${reply.data.reason})`, "info");
      else this.toast(`Compacted ${this.label(agent)}: ${reply.data.tokens_before} → ${reply.data.tokens_after} tokens`, "info");
    } catch (err) {
      this.toast(`compact: ${(err as Error).message}`, "error");
    }
  }

  async restart(agent: AgentState): Promise<void> {
    try {
      await this.conn.request({ type: "agent.kill", agent_id: agent.id });
    } catch {
      /* dropped: the reconnect re-attaches, which restores it */
    }
    await this.attach(agent, agent.id === this.selected ? "interactive" : "observer");
  }

  // Terminate, Kill and Remove (lifecycle.ts): Kill and Remove ask first.
  async lifecycle(type: LifecycleCommand, id: string | null = this.selected): Promise<void> {
    const agent = id ? this.agents.get(id) : undefined;
    if (agent) await lifecycle(this, type, agent);
  }

  toast(text: string, kind = "info"): void {
    const el: HTMLElement = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status" }, text, h("button", { type: "button", "aria-label": "Close", onclick: () => el.remove() }, "×"));
    $("toasts").append(el);
    setTimeout(() => el.remove(), 8000);
  }
}

const WAITING = new Set(["waiting_for_permission", "waiting_for_ui"]);
// the overview's events, which every page gets for every agent: no conversation of theirs changes
const OVERVIEW = new Set(["agent_spawned", "agent_changed", "agent_removed", "agent_status_changed", "agent_activity"]);
const THEMES = ["auto", "light", "dark"];

function nextTheme(current: string | undefined): string {
  return THEMES[(THEMES.indexOf(current || "auto") + 1) % THEMES.length];
}

const app = new App();
(window as unknown as { shard: App }).shard = app; // for the console and the browser tests; holds no secret
app.start();

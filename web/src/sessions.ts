// Sessions (PROTOCOL §9.2 session_op): list this agent's sessions, fork from a message. A fork is a
// new session; "Open" adopts it as a new agent in the same folder (agent.create with session_id).
import { h } from "./dom.js";
import type { App } from "./main";
import type { AgentState } from "./store/agent";

type Session = { session_id: string; title?: string; forks?: { session_id: string }[] };
type Row = { id: string; label: string; fork?: boolean };

export class Sessions {
  app: App;
  el: HTMLElement;

  constructor(app: App) {
    this.app = app;
    this.el = document.getElementById("sessions")!;
    document.getElementById("sessions-btn")!.addEventListener("click", () => this.toggle());
  }

  async toggle(): Promise<void> {
    if (!this.el.hidden) {
      this.el.hidden = true;
      return;
    }
    await this.list();
  }

  async list(): Promise<void> {
    const agent = this.app.selected ? this.app.agents.get(this.app.selected) : undefined;
    if (!agent) return;
    const reply = await this.op(agent, "list");
    if (!reply) return;
    const rows: Row[] = [];
    const sessions: Session[] = reply.data.sessions || [];
    // a fork is listed on its own and under its source: show it once, under its source
    const forks = new Set(sessions.flatMap((s) => (s.forks || []).map((f) => f.session_id)));
    for (const session of sessions) {
      if (forks.has(session.session_id)) continue;
      rows.push({ id: session.session_id, label: session.title || "" });
      for (const fork of session.forks || []) rows.push({ id: fork.session_id, label: `fork of ${session.session_id}`, fork: true });
    }
    this.el.replaceChildren(
      ...rows.map((row) =>
        h(
          "li",
          { class: row.fork ? "fork-row" : "session-row", dataset: { sessionId: row.id } },
          h("code", {}, row.id),
          row.label ? ` ${row.label} ` : " ",
          row.id === agent.sessionId
            ? h("span", { class: "badge" }, "current")
            : h("button", { type: "button", onclick: () => this.open(agent, row.id) }, "Open"),
        ),
      ),
    );
    if (!rows.length) this.el.append(h("li", {}, "No sessions."));
    this.el.hidden = false;
  }

  async fork(agent: AgentState, messageId: string): Promise<void> {
    const reply = await this.op(agent, "fork", { from_entry_id: messageId });
    if (!reply) return;
    this.app.toast(`Forked into session ${reply.data.session_id}`, "info");
    if (agent.id === this.app.selected) await this.list();
  }

  async open(agent: AgentState, sessionId: string): Promise<void> {
    try {
      const reply = await this.app.conn.request({ type: "agent.create", cwd: agent.info.cwd, session_id: sessionId });
      if (!reply.success) return this.app.toast(`open: ${reply.error.message}`, "error");
      const id = reply.data.agent_id;
      if (!this.app.agents.has(id)) this.app.upsertInfo({ agent_id: id, cwd: agent.info.cwd, status: "idle", runtime_state: "running", created_at: 0 });
      await this.app.select(id);
    } catch (err) {
      this.app.toast(`open: ${(err as Error).message}`, "error");
    }
  }

  async op(agent: AgentState, op: string, args?: Record<string, unknown>) {
    try {
      const reply = await this.app.conn.request({ type: "session_op", agent_id: agent.id, op, ...(args ? { args } : {}) });
      if (!reply.success) {
        this.app.toast(`${op}: ${reply.error.message}`, "error");
        return null;
      }
      return reply;
    } catch (err) {
      this.app.toast(`${op}: ${(err as Error).message}`, "error");
      return null;
    }
  }
}

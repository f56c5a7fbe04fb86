// The orchestrator view (PROTOCOL §10, §12.4): one row per agent with status, runtime state, live
// activity, cwd, model, mode, usage and cost, and a Terminate button. Rows are keyed by agent id and
// updated in place. "needs an answer" marks an agent, other than the selected one, that waits on a
// permission or UI request: known from its status (agent_status_changed / agent_activity reach
// every page, attached or not) or from a request this page holds.
import { formatCost, formatTokens, h } from "../dom.js";

const WAITING = new Set(["waiting_for_permission", "waiting_for_ui"]);

export class AgentList {
  constructor(el, { onSelect, onWatch, onTerminate }) {
    this.el = el;
    this.rows = new Map();
    this.onSelect = onSelect;
    this.onWatch = onWatch;
    this.onTerminate = onTerminate;
  }

  update(agent, selected) {
    let row = this.rows.get(agent.id);
    if (!row) {
      row = h("li", { class: "agent-row", dataset: { agentId: agent.id } });
      this.rows.set(agent.id, row);
      this.el.append(row);
    }
    const u = agent.usage;
    const usage = u.input || u.output ? `${formatTokens(u.input)} in · ${formatTokens(u.output)} out ${formatCost(u.cost)}` : "";
    row.classList.toggle("selected", selected);
    row.dataset.status = agent.status;
    const runtime = agent.info.runtime_state || "running";
    row.dataset.runtime = runtime;
    const asks = agent.requests.size > 0 || WAITING.has(agent.status);
    const waiting = asks && !selected ? h("span", { class: "badge attention" }, "needs an answer") : null;
    const ended = runtime === "stopped" || runtime === "failed" || runtime === "stopping";
    row.replaceChildren(
      h(
        "button",
        { type: "button", class: "agent-open", "aria-current": selected ? "true" : undefined, onclick: () => this.onSelect(agent.id) },
        h("span", { class: "agent-name" }, agent.label),
        h("span", { class: `badge status-${agent.status}` }, agent.status),
        agent.activity && agent.activity.phase !== "idle" ? h("span", { class: "activity" }, agent.activity.phase + (agent.activity.tool_name ? ` ${agent.activity.tool_name}` : "")) : null,
        runtime !== "running" ? h("span", { class: `badge runtime runtime-${runtime}` }, runtime) : null,
        waiting,
      ),
      h("div", { class: "agent-meta" }, h("code", {}, agent.info.cwd), " ", [agent.model, agent.mode].filter(Boolean).join(" · "), usage ? h("div", { class: "usage" }, usage) : null),
      h(
        "label",
        { class: "watch" },
        h("input", { type: "checkbox", checked: agent.role !== null, disabled: selected, onchange: (e) => this.onWatch(agent.id, e.target.checked) }),
        " watch",
      ),
      h("button", { type: "button", class: "agent-terminate", disabled: ended, "aria-label": `Terminate ${agent.label}`, onclick: () => this.onTerminate(agent.id) }, "Terminate"),
    );
  }

  remove(id) {
    const row = this.rows.get(id);
    if (row) row.remove();
    this.rows.delete(id);
  }
}

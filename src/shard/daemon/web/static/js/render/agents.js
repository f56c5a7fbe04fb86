// The orchestrator view (PROTOCOL §10, §12.4): one row per agent with status, live activity, cwd,
// model, mode, usage and cost. Rows are keyed by agent id and updated in place.
import { formatCost, formatTokens, h } from "../dom.js";

export class AgentList {
  constructor(el, { onSelect, onWatch }) {
    this.el = el;
    this.rows = new Map();
    this.onSelect = onSelect;
    this.onWatch = onWatch;
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
    const waiting = agent.requests.size > 0 && !selected ? h("span", { class: "badge attention" }, "needs an answer") : null;
    row.replaceChildren(
      h(
        "button",
        { type: "button", class: "agent-open", "aria-current": selected ? "true" : undefined, onclick: () => this.onSelect(agent.id) },
        h("span", { class: "agent-name" }, agent.label),
        h("span", { class: `badge status-${agent.status}` }, agent.status),
        agent.activity && agent.activity.phase !== "idle" ? h("span", { class: "activity" }, agent.activity.phase + (agent.activity.tool_name ? ` ${agent.activity.tool_name}` : "")) : null,
        waiting,
      ),
      h("div", { class: "agent-meta" }, h("code", {}, agent.info.cwd), " ", [agent.model, agent.mode].filter(Boolean).join(" · "), usage ? h("div", { class: "usage" }, usage) : null),
      h(
        "label",
        { class: "watch" },
        h("input", { type: "checkbox", checked: agent.role !== null, disabled: selected, onchange: (e) => this.onWatch(agent.id, e.target.checked) }),
        " watch",
      ),
    );
  }

  remove(id) {
    const row = this.rows.get(id);
    if (row) row.remove();
    this.rows.delete(id);
  }
}

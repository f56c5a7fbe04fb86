// The orchestrator view (PROTOCOL §10, §12.4): one row per agent with status, runtime state, live
// activity, cwd, model, mode, usage and cost, and Terminate and Remove buttons (Terminate disabled,
// saying why, when there is no runtime to stop). Rows are keyed by agent id and updated in place.
// "needs an answer" marks an agent, other than the selected one, that waits on a permission or UI
// request: known from its status (agent_status_changed / agent_activity reach every page, attached
// or not) or from a request this page holds.
import { append, formatCost, h } from "../dom.js";
import { statusWords, tokens } from "../words.js";
import { folderName } from "../store/names";

const WAITING = new Set(["waiting_for_permission", "waiting_for_ui"]);

export class AgentList {
  constructor(el, { onSelect, onWatch, onTerminate, onRemove }) {
    this.el = el;
    this.rows = new Map();
    this.onSelect = onSelect;
    this.onWatch = onWatch;
    this.onTerminate = onTerminate;
    this.onRemove = onRemove;
    this.canRemove = true; // false when the daemon's hello does not offer agent-remove
  }

  // The row's focusable parts (open, watch, Terminate, Remove) are made once and kept, so an agent that
  // streams never takes the keyboard focus away from its row; only what they show is redrawn.
  update(agent, selected, label = agent.id) {
    let row = this.rows.get(agent.id);
    if (!row) {
      row = {
        li: h("li", { class: "agent-row", dataset: { agentId: agent.id } }),
        open: h("button", { type: "button", class: "agent-open", onclick: () => this.onSelect(agent.id) }),
        meta: h("div", { class: "agent-meta" }),
        watch: h("input", { type: "checkbox", onchange: (e) => this.onWatch(agent.id, e.target.checked) }),
        terminate: h("button", { type: "button", class: "agent-terminate", onclick: () => this.onTerminate(agent.id) }, "Terminate"),
        remove: h("button", { type: "button", class: "agent-remove danger", onclick: () => this.onRemove(agent.id) }, "Remove"),
      };
      const actions = h("span", { class: "agent-actions" }, row.terminate, row.remove);
      row.li.append(row.open, row.meta, h("label", { class: "watch" }, row.watch, " watch"), actions);
      row.agent = agent;
      this.rows.set(agent.id, row);
      this.place(row);
      // its subagents listed before it move under it
      for (const other of this.rows.values()) if (other.agent.info.parent_agent_id === agent.id) this.place(other);
    }
    row.agent = agent;
    row.label = label;
    const u = agent.usage;
    const usage = u.input || u.output ? `${tokens(u.input)} in · ${tokens(u.output)} out ${formatCost(u.cost)}` : "";
    const runtime = agent.info.runtime_state || "running";
    const asks = agent.requests.size > 0 || WAITING.has(agent.info.status);
    row.li.classList.toggle("selected", selected);
    row.li.dataset.status = agent.info.status;
    row.li.dataset.runtime = runtime;
    if (selected) row.open.setAttribute("aria-current", "true");
    else row.open.removeAttribute("aria-current");
    redraw(
      row.open,
      h("span", { class: "agent-name" }, label),
      h("span", { class: `badge status-${agent.info.status}` }, statusWords(agent.info.status)),
      agent.activity && agent.activity.phase !== "idle" ? h("span", { class: "activity" }, agent.activity.phase + (agent.activity.tool_name ? ` ${agent.activity.tool_name}` : "")) : null,
      runtime !== "running" ? h("span", { class: `badge runtime runtime-${runtime}` }, runtime) : null,
      asks && !selected ? h("span", { class: "badge attention" }, "needs an answer") : null,
    );
    redraw(row.meta, h("code", {}, agent.info.cwd), " ", [agent.model, agent.window && `window ${agent.window}`, agent.mode].filter(Boolean).join(" · "), usage ? h("div", { class: "usage" }, usage) : null);
    row.watch.checked = agent.role !== null;
    row.watch.disabled = selected;
    const idle = idleReason(runtime, "terminate");
    row.terminate.disabled = idle !== null;
    row.terminate.title = idle || "Stop its runtime now, or when its turn ends (the agent stays)";
    row.terminate.setAttribute("aria-label", `Terminate ${label}`);
    row.remove.hidden = !this.canRemove;
    row.remove.title = "Remove it from the list, stopping it first if it runs (its session is kept)";
    row.remove.setAttribute("aria-label", `Remove ${label}`);
    if (this.query?.length) this.filter(row);
  }

  remove(id) {
    const row = this.rows.get(id);
    this.rows.delete(id);
    if (!row) return;
    const group = row.li.closest(".agent-group");
    row.li.remove();
    if (group && !group.querySelector(".agent-row")) group.remove();
  }

  // A row goes under its parent's row (a subagent, with its run state), else into its folder's group.
  place(row) {
    const info = row.agent.info;
    const parent = info.parent_agent_id && this.rows.get(info.parent_agent_id);
    let box;
    if (parent) {
      box = parent.li.querySelector(":scope > .agent-children");
      if (!box) parent.li.append((box = h("ul", { class: "agent-children", "aria-label": "Subagents" })));
    } else {
      let group = [...this.el.children].find((g) => g.dataset.cwd === info.cwd);
      if (!group) {
        group = h("li", { class: "agent-group", dataset: { cwd: info.cwd } }, h("h3", { title: info.cwd }, folderName(info.cwd), " ", h("span", { class: "folder-path" }, info.cwd)), h("ul", { "aria-label": `Agents in ${info.cwd}` }));
        this.el.prepend(group); // the newest folder first
      }
      box = group.querySelector(":scope > ul");
    }
    if (row.li.parentNode !== box) {
      const old = row.li.closest(".agent-group");
      box.prepend(row.li); // the newest agent first
      if (old && !old.querySelector(".agent-row")) old.remove();
    }
    this.filter(row);
  }

  // The search box: rows whose name or folder do not contain every word are hidden.
  search(text) {
    this.query = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of this.rows.values()) this.filter(row);
  }

  filter(row) {
    const words = this.query || [];
    const hay = `${row.label || ""} ${row.agent.info.cwd} ${row.agent.id}`.toLowerCase();
    row.li.classList.toggle("filtered-out", !words.every((w) => hay.includes(w)));
    for (const group of this.el.children) group.hidden = !group.querySelector(".agent-row:not(.filtered-out)");
  }
}

// Why Terminate or Kill has nothing to do (null: it has): a disabled control says so in its title.
export function idleReason(runtime, what) {
  if (runtime === "stopped") return `The agent is stopped: nothing to ${what}. A prompt starts it again; Remove takes it off the list.`;
  if (runtime === "failed") return `The agent's runtime failed: nothing to ${what}. A prompt restarts it; Remove takes it off the list.`;
  if (runtime === "stopping") return `The agent is already stopping: nothing to ${what}.`;
  return null;
}

// replaceChildren() would write a skipped (null) part as the text "null"; append() leaves it out
function redraw(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

// Model, mode and reasoning pickers (PROTOCOL §7, §9.2), each shown only when the attached runtime's
// sync.capabilities advertises its catalog, built only from the server's catalog, and switched with
// set_* only when the matching *-switch capability is there. A catalog answered under an older
// connection or runtime_epoch is discarded.
import { h, windowText } from "./dom.js";

export class Controls {
  /** @param {(agent: any, type: string, data: any) => void} [onCatalog] */
  constructor(el, conn, toast, onCatalog = () => {}) {
    this.onCatalog = onCatalog; // (agent, type, data): a catalog that passed the stale-answer guard
    this.el = el;
    this.conn = conn;
    this.toast = toast;
    this.agent = null;
    this.models = h("select", { "aria-label": "Model", class: "model-picker" });
    this.modes = h("select", { "aria-label": "Mode", class: "mode-picker" });
    this.levels = h("select", { "aria-label": "Reasoning level", class: "reasoning-picker" });
    this.models.addEventListener("change", () => this.set("set_model", { model: this.models.value }));
    this.modes.addEventListener("change", () => this.set("set_mode", { mode: this.modes.value }));
    this.levels.addEventListener("change", () => this.set("set_reasoning_level", { model: this.activeModel, effort: this.levels.value }));
  }

  // (Re)build for an agent after its sync: fetch each advertised catalog.
  async load(agent) {
    this.agent = agent;
    const caps = new Set(agent.capabilities || []);
    const shown = [];
    const jobs = [];
    if (caps.has("mode-catalog")) {
      shown.push(this.modes);
      jobs.push(this.fetch(agent, "list_modes", (data) => fill(this.modes, data.modes.map((m) => [m.name, m.name, m.description]), data.active)));
    }
    if (caps.has("model-catalog")) {
      shown.push(this.models);
      jobs.push(
        this.fetch(agent, "list_models", (data) => {
          this.activeModel = data.active.id;
          fill(this.models, data.models.map((m) => [m.id, m.label ? `${m.id}` : m.id, m.label]), data.active.id);
        }),
      );
    }
    if (caps.has("reasoning-catalog")) {
      shown.push(this.levels);
      jobs.push(
        this.fetch(agent, "list_reasoning_levels", (data) => {
          this.activeModel = data.model.id;
          fill(this.levels, data.levels.map((l) => [l.id, l.label, l.description]), data.active);
        }),
      );
    }
    this.models.disabled = !caps.has("model-switch");
    this.modes.disabled = !caps.has("mode-switch");
    this.levels.disabled = !caps.has("reasoning-switch");
    this.el.replaceChildren(...shown.map((s) => h("label", {}, s.getAttribute("aria-label") + " ", s)));
    await Promise.allSettled(jobs);
  }

  async fetch(agent, type, apply) {
    const generation = this.conn.generation;
    const epoch = agent.epoch;
    let reply;
    try {
      reply = await this.conn.request({ type, agent_id: agent.id });
    } catch {
      return;
    }
    if (generation !== this.conn.generation || epoch !== agent.epoch || this.agent !== agent) return; // stale
    if (!reply.success) return;
    apply(reply.data);
    this.onCatalog(agent, type, reply.data);
  }

  async set(type, fields) {
    const agent = this.agent;
    if (!agent) return;
    try {
      const reply = await this.conn.request({ type, agent_id: agent.id, ...fields });
      if (!reply.success) this.toast(`${type}: ${reply.error.message}`, "error");
    } catch (err) {
      this.toast(`${type}: ${err.message}`, "error");
    }
  }

  modelChanged(agent, ev) {
    if (ev.capabilities) agent.capabilities = ev.capabilities;
    agent.model = ev.active.id;
    agent.window = windowText(ev.active);
    if (agent === this.agent) {
      if (ev.capabilities) this.load(agent);
      else selectValue(this.models, ev.active.id);
      this.activeModel = ev.active.id;
    }
  }

  modeChanged(agent, ev) {
    agent.mode = ev.mode;
    if (agent === this.agent) selectValue(this.modes, ev.mode);
  }

  reasoningChanged(agent, ev) {
    if (agent === this.agent) selectValue(this.levels, ev.active);
  }
}

function fill(select, options, active) {
  select.replaceChildren(...options.map(([value, label, title]) => h("option", { value, title }, label)));
  select.value = active;
}

function selectValue(select, value) {
  select.value = value;
}

// Model, mode and reasoning pickers (PROTOCOL §7, §9.2), each shown only when the attached runtime's
// sync.capabilities advertises its catalog, built only from the server's catalog, and switched with
// set_* only when the matching *-switch capability is there. A catalog answered under an older
// connection or runtime_epoch is discarded.
import { h } from "./dom.js";

type Data = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- a list_* answer's data
type Reply = { success: boolean; data?: Data; error?: { message: string } };

/** What the pickers read of an agent (the store's AgentState has it; the module tests pass less). */
export interface PickerAgent {
  id: string;
  capabilities: string[] | null;
  epoch: number | null;
}

export interface PickerConnection {
  generation: number;
  request(message: Record<string, unknown>): Promise<Reply>;
}

export class Controls {
  onCatalog: (agent: PickerAgent, type: string, data: unknown) => void;
  el: HTMLElement;
  conn: PickerConnection;
  toast: (text: string, kind: string) => void;
  agent: PickerAgent | null;
  models: HTMLSelectElement;
  modes: HTMLSelectElement;
  levels: HTMLSelectElement;
  activeModel: string | undefined;

  constructor(el: HTMLElement, conn: PickerConnection, toast: (text: string, kind: string) => void, onCatalog: (agent: PickerAgent, type: string, data: unknown) => void = () => {}) {
    this.onCatalog = onCatalog; // (agent, type, data): a catalog that passed the stale-answer guard
    this.el = el;
    this.conn = conn;
    this.toast = toast;
    this.agent = null;
    this.models = h("select", { "aria-label": "Model", class: "model-picker" }) as HTMLSelectElement;
    this.modes = h("select", { "aria-label": "Mode", class: "mode-picker" }) as HTMLSelectElement;
    this.levels = h("select", { "aria-label": "Reasoning level", class: "reasoning-picker" }) as HTMLSelectElement;
    this.models.addEventListener("change", () => this.set("set_model", { model: this.models.value }));
    this.modes.addEventListener("change", () => this.set("set_mode", { mode: this.modes.value }));
    this.levels.addEventListener("change", () => this.set("set_reasoning_level", { model: this.activeModel, effort: this.levels.value }));
  }

  // (Re)build for an agent after its sync: fetch each advertised catalog.
  async load(agent: PickerAgent): Promise<void> {
    this.agent = agent;
    const caps = new Set(agent.capabilities || []);
    const shown: HTMLSelectElement[] = [];
    const jobs: Promise<void>[] = [];
    if (caps.has("mode-catalog")) {
      shown.push(this.modes);
      jobs.push(this.fetch(agent, "list_modes", (data) => fill(this.modes, data.modes.map((m: Data) => [m.name, m.name, m.description]), data.active)));
    }
    if (caps.has("model-catalog")) {
      shown.push(this.models);
      jobs.push(
        this.fetch(agent, "list_models", (data) => {
          this.activeModel = data.active.id;
          fill(this.models, data.models.map((m: Data) => [m.id, m.id, m.label]), data.active.id);
        }),
      );
    }
    if (caps.has("reasoning-catalog")) {
      shown.push(this.levels);
      jobs.push(
        this.fetch(agent, "list_reasoning_levels", (data) => {
          this.activeModel = data.model.id;
          fill(this.levels, data.levels.map((l: Data) => [l.id, l.label, l.description]), data.active);
        }),
      );
    }
    this.models.disabled = !caps.has("model-switch");
    this.modes.disabled = !caps.has("mode-switch");
    this.levels.disabled = !caps.has("reasoning-switch");
    this.el.replaceChildren(...shown.map((s) => h("label", {}, s.getAttribute("aria-label") + " ", s)));
    await Promise.allSettled(jobs);
  }

  async fetch(agent: PickerAgent, type: string, apply: (data: Data) => void): Promise<void> {
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

  async set(type: string, fields: Record<string, unknown>): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      const reply = await this.conn.request({ type, agent_id: agent.id, ...fields });
      if (!reply.success) this.toast(`${type}: ${reply.error?.message}`, "error");
    } catch (err) {
      this.toast(`${type}: ${(err as Error).message}`, "error");
    }
  }

  // the store folded the event already (model, window, capabilities): the pickers follow
  modelChanged(agent: PickerAgent, ev: Data): void {
    if (agent === this.agent) {
      if (ev.capabilities) this.load(agent);
      else selectValue(this.models, ev.active.id);
      this.activeModel = ev.active.id;
    }
  }

  modeChanged(agent: PickerAgent, ev: Data): void {
    if (agent === this.agent) selectValue(this.modes, ev.mode);
  }

  reasoningChanged(agent: PickerAgent, ev: Data): void {
    if (agent === this.agent) selectValue(this.levels, ev.active);
  }
}

function fill(select: HTMLSelectElement, options: [string, string, string | undefined][], active: string): void {
  select.replaceChildren(...options.map(([value, label, title]) => h("option", { value, title }, label)));
  select.value = active;
}

function selectValue(select: HTMLSelectElement, value: string): void {
  select.value = value;
}

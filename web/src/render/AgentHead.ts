// The open agent's head as the store has it: its name, where it runs and on what, its status and the
// status detail, and whether Compact, Terminate and Kill have something to do (a disabled one says
// why in its title). Drawn when any of that changes, never for a streamed delta.
import { h } from "../dom.js";
import { isBusy, type AgentState } from "../store/agent";
import { whereAt } from "../store/names";
import type { Store } from "../store/store";
import { statusWords } from "../words.js";
import { idleReason } from "./AgentList";

const $ = (id: string) => document.getElementById(id) as HTMLElement;

export function mountHead(store: Store, label: (agent: AgentState) => string): void {
  let drawn = "";
  store.subscribe(() => {
    const agent = store.agent(store.state.selected);
    if (!agent) {
      drawn = "";
      return;
    }
    const key = JSON.stringify([agent.id, label(agent), agent.info.cwd, agent.info.host, agent.model, agent.window, agent.info.status, agent.statusDetail, agent.synced, isBusy(agent), agent.info.runtime_state]);
    if (key === drawn) return;
    drawn = key;
    draw(agent, label);
  });
}

function draw(agent: AgentState, label: (agent: AgentState) => string): void {
    const model = [agent.model, agent.window && `window ${agent.window}`].filter(Boolean).join(", ");
    // the name, then where and on what (muted; on a phone only the name, the rest in its title)
    const where = `${whereAt(agent.info.cwd, agent.info.host)}${model ? ` · ${model}` : ""}`;
    $("agent-title").replaceChildren(h("span", { class: "title-name" }, label(agent)), h("span", { class: "title-where" }, ` — ${where}`));
    $("agent-title").title = where;
    const status = $("agent-status");
    status.textContent = statusWords(agent.info.status);
    status.className = `badge status-${agent.info.status}`;
    const detail = $("agent-detail");
    detail.textContent = agent.statusDetail || "";
    detail.hidden = !agent.statusDetail;
    // compaction is a between-turn operation (CONFLICT mid-turn): offered once synced, when idle
    ($("compact") as HTMLButtonElement).hidden = !agent.synced;
    ($("compact") as HTMLButtonElement).disabled = isBusy(agent);
    // nothing to stop without a runtime: the buttons say why instead of answering "done"
    const runtime = agent.info.runtime_state || "running";
    for (const [id, what, title] of [["terminate", "terminate", "Stop its runtime now, or when its turn ends"], ["kill", "kill", "Stop its runtime at once, a running turn with it"]]) {
      const why = idleReason(runtime, what);
      ($(id) as HTMLButtonElement).disabled = why !== null;
      $(id).title = why || title;
    }
  }

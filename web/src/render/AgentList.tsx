// The orchestrator view (PROTOCOL §10, §12.4) as Preact components on the store: agents grouped by
// folder (newest first), subagents nested under their parent's row with their run state, each row
// named as a person knows the agent (store/names.ts), with status, runtime state, live activity,
// model, usage, "needs an answer" (a request this page holds, or a waiting status the overview
// reported), watch, Terminate (disabled, saying why, without a runtime) and Remove. Rows are keyed
// by agent id, so a row's buttons are the same elements however often it re-renders and an agent
// that streams never takes the keyboard focus away from its row. The list re-renders at most once a
// frame, and a row only when something it shows changed (a delta changes nothing here).
import { render } from "preact";
import { memo } from "preact/compat";
import { useEffect, useState } from "preact/hooks";
import type { AgentState } from "../store/agent";
import { agentName, folderName, groupByFolder, whereAt } from "../store/names";
import type { Store } from "../store/store";
import { statusWords, tokens } from "../words.js";

const WAITING = new Set(["waiting_for_permission", "waiting_for_ui"]);

export interface ListActions {
  onSelect(id: string): void;
  onWatch(id: string, on: boolean): void;
  onTerminate(id: string): void;
  onRemove(id: string): void;
}

// Why Terminate or Kill has nothing to do (null: it has): a disabled control says so in its title.
export function idleReason(runtime: string, what: string): string | null {
  if (runtime === "stopped") return `The agent is stopped: nothing to ${what}. A prompt starts it again; Remove takes it off the list.`;
  if (runtime === "failed") return `The agent's runtime failed: nothing to ${what}. A prompt restarts it; Remove takes it off the list.`;
  if (runtime === "stopping") return `The agent is already stopping: nothing to ${what}.`;
  return null;
}

/** What a row shows, as one comparable value: the row re-renders only when it changes. */
interface RowView {
  id: string;
  name: string;
  status: string;
  runtime: string;
  activity: string;
  meta: string;
  usage: string;
  watched: boolean;
  selected: boolean;
  asks: boolean;
  canRemove: boolean;
}

function rowView(agent: AgentState, selected: boolean, canRemove: boolean): RowView {
  const u = agent.usage;
  const cost = u.cost ? ` $${u.cost.toFixed(4)}` : "";
  const activity = agent.activity && agent.activity.phase !== "idle" ? agent.activity.phase + (agent.activity.tool_name ? ` ${agent.activity.tool_name}` : "") : "";
  return {
    id: agent.id,
    name: agentName(agent),
    status: agent.info.status,
    runtime: agent.info.runtime_state || "running",
    activity,
    meta: [agent.model, agent.window && `window ${agent.window}`, agent.mode].filter(Boolean).join(" · "),
    usage: u.input || u.output ? `${tokens(u.input)} in · ${tokens(u.output)} out${cost}` : "",
    watched: agent.role !== null,
    selected,
    asks: agent.requests.size > 0 || WAITING.has(agent.info.status),
    canRemove,
  };
}

/** Each agent's row as last drawn (its RowView as a string), to skip redraws that change nothing. */
const drawn = new WeakMap<Store, Map<string, string>>();

function rowChanged(store: Store, id: string): boolean {
  const agent = store.agent(id);
  const seen = drawn.get(store);
  if (!agent || !seen) return true;
  return seen.get(id) !== JSON.stringify(rowView(agent, id === store.state.selected, store.state.connection.canRemove));
}

function sameRow(a: { view: RowView; cwd: string; kids: unknown }, b: { view: RowView; cwd: string; kids: unknown }): boolean {
  if (a.kids !== b.kids || a.cwd !== b.cwd) return false;
  for (const key of Object.keys(a.view) as (keyof RowView)[]) if (a.view[key] !== b.view[key]) return false;
  return true;
}

const Row = memo(function Row({ view, cwd, kids, actions }: { view: RowView; cwd: string; kids: preact.ComponentChildren; actions: ListActions }) {
  const idle = idleReason(view.runtime, "terminate");
  return (
    <li class={view.selected ? "agent-row selected" : "agent-row"} data-agent-id={view.id} data-status={view.status} data-runtime={view.runtime}>
      <button type="button" class="agent-open" aria-current={view.selected ? "true" : undefined} onClick={() => actions.onSelect(view.id)}>
        <span class="agent-name">{view.name}</span>
        <span class={`badge status-${view.status}`}>{statusWords(view.status)}</span>
        {view.activity ? <span class="activity">{view.activity}</span> : null}
        {view.runtime !== "running" ? <span class={`badge runtime runtime-${view.runtime}`}>{view.runtime}</span> : null}
        {view.asks && !view.selected ? <span class="badge attention">needs an answer</span> : null}
      </button>
      <div class="agent-meta">
        <code>{cwd}</code> {view.meta}
        {view.usage ? <div class="usage">{view.usage}</div> : null}
      </div>
      <label class="watch">
        <input type="checkbox" checked={view.watched} disabled={view.selected} onChange={(e) => actions.onWatch(view.id, (e.target as HTMLInputElement).checked)} /> watch
      </label>
      <span class="agent-actions">
        <button type="button" class="agent-terminate" disabled={idle !== null} title={idle || "Stop its runtime now, or when its turn ends (the agent stays)"} aria-label={`Terminate ${view.name}`} onClick={() => actions.onTerminate(view.id)}>
          Terminate
        </button>
        <button type="button" class="agent-remove danger" hidden={!view.canRemove} title="Remove it from the list, stopping it first if it runs (its session is kept)" aria-label={`Remove ${view.name}`} onClick={() => actions.onRemove(view.id)}>
          Remove
        </button>
      </span>
      {kids}
    </li>
  );
}, (before, after) => sameRow(before, after) && before.actions === after.actions);

function matches(agent: AgentState, words: string[]): boolean {
  const hay = `${agentName(agent)} ${agent.info.cwd} ${agent.id}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function AgentList({ store, actions, query }: { store: Store; actions: ListActions; query: string }) {
  const [, redraw] = useState(0);
  useEffect(() => {
    let queued = false;
    return store.subscribe((changed) => {
      // only what a row shows: a streamed delta changes nothing here, and redrawing the list under
      // the pointer every frame would cost a hit test per frame as well
      if (changed && ![...changed].some((id) => rowChanged(store, id))) return;
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        redraw((n) => n + 1);
      });
    });
  }, [store]);
  const { agents, selected, connection } = store.state;
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const all = [...agents.values()].reverse(); // the newest first
  const childrenOf = new Map<string, AgentState[]>();
  for (const agent of all) {
    const parent = agent.info.parent_agent_id;
    if (parent && agents.has(parent)) childrenOf.set(parent, [...(childrenOf.get(parent) || []), agent]);
  }
  // a row shows when it or a subagent of it matches the search
  const shown = (agent: AgentState): boolean => matches(agent, words) || (childrenOf.get(agent.id) || []).some(shown);
  const seen = new Map<string, string>();
  drawn.set(store, seen);
  const row = (agent: AgentState) => {
    const kids = (childrenOf.get(agent.id) || []).filter(shown);
    const view = rowView(agent, agent.id === selected, connection.canRemove);
    seen.set(agent.id, JSON.stringify(view));
    return (
      <Row
        key={agent.id}
        view={view}
        cwd={agent.info.cwd}
        kids={kids.length ? <ul class="agent-children" aria-label={`Subagents of ${agentName(agent)}`}>{kids.map(row)}</ul> : null}
        actions={actions}
      />
    );
  };
  return (
    <>
      {groupByFolder(all).map((group) => {
        const roots = group.roots.filter(shown);
        if (!roots.length) return null;
        return (
          <li class="agent-group" key={whereAt(group.cwd, group.host)} data-cwd={group.cwd}>
            <h3 title={whereAt(group.cwd, group.host)}>
              {folderName(group.cwd)} {group.host ? <span class="host-badge">@{group.host}</span> : null}{" "}
              <span class="folder-path">{group.cwd}</span>
            </h3>
            <ul aria-label={`Agents in ${group.cwd}`}>{roots.map(row)}</ul>
          </li>
        );
      })}
    </>
  );
}

/** Renders the list into `el` (an <ul>) and keeps it current; `search` re-renders with a new query. */
export function mountAgentList(el: HTMLElement, store: Store, actions: ListActions): { search(text: string): void } {
  let query = "";
  const draw = () => render(<AgentList store={store} actions={actions} query={query} />, el);
  draw();
  return {
    search(text: string) {
      query = text;
      draw();
    },
  };
}

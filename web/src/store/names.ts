// What a person calls an agent: the name a person gave it, its subagent's display name or alias, its
// own name, else its folder and the first thing it was asked ("shard: fix the flaky test"); and how agents group: by folder,
// children under their parent.
import type { AgentState } from "./agent";

/** Where a folder is, as a person reads it: "/srv/app @box" on a host, the path alone here. */
export function whereAt(cwd: string, host?: string): string {
  return host ? `${cwd} @${host}` : cwd;
}

export function folderName(cwd: string): string {
  const parts = cwd.replace(/\/+$/, "").split("/");
  return parts[parts.length - 1] || cwd || "/";
}

export function agentName(agent: AgentState): string {
  const info = agent.info;
  // a name a person gave (agent.rename) wins; a subagent's own name is its alias until then
  const renamed = info.name && info.name !== info.alias ? info.name : null;
  const given = renamed || info.display_name || info.alias || info.name;
  if (given) return given;
  return agent.firstPrompt ? `${folderName(info.cwd)}: ${agent.firstPrompt}` : `${folderName(info.cwd)} (new agent)`;
}

export interface Group {
  cwd: string;
  /** the machine the folder is on (absent: the daemon's own): the same path elsewhere is another folder */
  host?: string;
  /** top-level agents of the folder (those whose parent is not listed), newest first */
  roots: AgentState[];
}

/** Agents by folder (folders in the order their newest agent was made), children left to `children`. */
export function groupByFolder(agents: Iterable<AgentState>): Group[] {
  const all = [...agents];
  const known = new Set(all.map((a) => a.id));
  const groups = new Map<string, AgentState[]>();
  for (const agent of all) {
    if (agent.info.parent_agent_id && known.has(agent.info.parent_agent_id)) continue;
    const key = `${agent.info.host || ""}\u0000${agent.info.cwd}`;
    const list = groups.get(key) || [];
    list.push(agent);
    groups.set(key, list);
  }
  return [...groups.values()].map((roots) => {
    const { cwd, host } = roots[0].info;
    return host ? { cwd, host, roots } : { cwd, roots };
  });
}

/** The agents whose parent is `parent`, in the order they came. */
export function children(agents: Iterable<AgentState>, parent: string): AgentState[] {
  return [...agents].filter((a) => a.info.parent_agent_id === parent);
}

/** Whether `child` descends from `ancestor` (a background child asks its nearest interactive one). */
export function descends(agents: Map<string, AgentState>, child: AgentState, ancestor: string): boolean {
  let at: AgentState | undefined = child;
  for (let seen = 0; at && seen < 16; seen++) {
    const parent: string | undefined = at.info.parent_agent_id;
    if (!parent) return false;
    if (parent === ancestor) return true;
    at = agents.get(parent);
  }
  return false;
}

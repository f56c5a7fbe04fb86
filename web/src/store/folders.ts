// What the new-agent form offers as its folder: the folders of the agents this page knows and of
// those made here (recent first), then the daemon's completions of what is typed (fs.complete,
// capability fs-complete). Only an absolute path (or one from ~) is completed: agent.create takes
// nothing else.

export const MAX_SUGGESTIONS = 20;

/** Whether `typed` is worth asking the daemon to complete. */
export function completable(typed: string): boolean {
  return typed.startsWith("/") || typed === "~" || typed.startsWith("~/");
}

/** The recent folders matching `typed` (all of them for an empty box), then the completions. */
export function suggestions(typed: string, recent: string[], completed: string[]): string[] {
  const needle = typed.trim().toLowerCase();
  const matching = recent.filter((f) => !needle || f.toLowerCase().includes(needle));
  return [...new Set([...matching, ...completed])].slice(0, MAX_SUGGESTIONS);
}

/** Recent folders: the agents' (newest first), then those remembered here, once each. */
export function recentFolders(agentCwds: string[], remembered: string[]): string[] {
  return [...new Set([...agentCwds.slice().reverse(), ...remembered])].slice(0, MAX_SUGGESTIONS);
}

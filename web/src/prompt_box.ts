// The prompt box's rules apart from its page (composer.tsx draws it): which slash commands match
// what is typed, and where ArrowUp / ArrowDown go in the agent's earlier messages.

// The slash commands: name, argument, what it does.
export const SLASH: [string, string, string][] = [
  ["/compact", "", "compact the conversation now"],
  ["/fork", "", "fork a new session from the last message"],
  ["/model", "ID", "switch the model (from the catalog)"],
  ["/mode", "NAME", "switch the mode"],
  ["/abort", "", "stop the running turn"],
];

/** The commands to hint under the box while it holds one line starting with "/". */
export function slashHints(typed: string): [string, string, string][] {
  if (!typed.startsWith("/") || typed.includes("\n")) return [];
  const word = typed.split(" ")[0];
  return SLASH.filter(([name]) => name.startsWith(word));
}

/** Whether `message` is a slash command to run rather than text to send. */
export function isSlashCommand(message: string): boolean {
  return message.startsWith("/") && SLASH.some(([name]) => message.split(/\s/)[0] === name);
}

/** Where the box is in the agent's history: `back` messages back (0: as typed), and what was typed. */
export interface Recall {
  back: number;
  typed: string;
}

/** ArrowUp (step 1) in an empty box, or at its start while recalling, brings back the agent's
 * earlier messages (`mine`, oldest first), newest first; ArrowDown (-1) goes forward again, to what
 * was typed. The box's new text and place, or null when the key is the textarea's own. */
export function recall(at: Recall, step: number, value: string, caretAtStart: boolean, mine: string[]): { at: Recall; value: string } | null {
  if (at.back === 0 && (value !== "" || step < 0)) return null;
  if (at.back > 0 && !caretAtStart && step > 0) return null;
  const next = at.back + step;
  if (next < 0 || next > mine.length) return null;
  const typed = at.back === 0 ? value : at.typed;
  return { at: { back: next, typed }, value: next === 0 ? typed : mine[mine.length - next] };
}

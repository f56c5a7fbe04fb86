// The new-agent form's fields as the command that makes the agent: agent.create, or with "new
// workspace" checked workspace.create (PROTOCOL §10.1a: a git worktree on a new branch of the
// folder's repository, with a fresh agent in it). workspace.create has no sandbox field, so the
// sandbox choice goes only with agent.create (the form disables it while the box is checked).

export interface CreateFields {
  cwd: string;
  model?: string;
  mode?: string;
  sandbox?: string;
  workspace?: boolean;
  label?: string;
  /** a [[hosts]] machine (host.list); empty: the daemon's own */
  host?: string;
}

export const SANDBOXES = ["off", "ask", "auto"];

export function createCommand(fields: CreateFields): Record<string, string> {
  const command: Record<string, string> = { type: fields.workspace ? "workspace.create" : "agent.create", cwd: fields.cwd.trim() };
  for (const key of ["model", "mode"] as const) {
    const value = (fields[key] || "").trim();
    if (value) command[key] = value;
  }
  const host = (fields.host || "").trim();
  if (host) command.host = host; // cwd is then a path on that machine
  if (fields.workspace) {
    const label = (fields.label || "").trim();
    if (label) command.label = label;
  } else if (fields.sandbox && SANDBOXES.includes(fields.sandbox)) command.sandbox = fields.sandbox;
  return command;
}

/** The agent a create's answer names: agent.create's `agent_id`, workspace.create's too. */
export function createdAgent(data: { agent_id?: string } | undefined): string | null {
  return data && typeof data.agent_id === "string" ? data.agent_id : null;
}

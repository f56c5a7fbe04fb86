// Terminate, Kill and Remove, in words: Kill and Remove ask first (confirm.tsx); the toasts say
// what happened ("Agent stopped", "Agent killed", "Agent removed with its 2 subagents").
import { confirmAction } from "./confirm";
import { idleReason } from "./render/AgentList";
import type { AgentState } from "./store/agent";
import { descends } from "./store/names";

export type LifecycleCommand = keyof typeof FAILED;

/** What a lifecycle command needs of the page. */
export interface LifecycleHost {
  agents: Map<string, AgentState>;
  conn: { request(message: Record<string, unknown>): Promise<{ success: boolean; data?: any; error?: { message: string } }> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  toast(text: string, kind?: string): void;
  label(agent: AgentState): string;
}

export async function lifecycle(host: LifecycleHost, type: LifecycleCommand, agent: AgentState): Promise<void> {
  if (type === "agent.kill" && !(await confirmKill(host, agent))) return;
  if (type === "agent.remove" && !(await confirmRemove(host, agent))) return;
  try {
    const reply = await host.conn.request({ type, agent_id: agent.id });
    if (reply.success) host.toast(doneText(type, reply.data), "info");
    else host.toast(`${FAILED[type]}: ${reply.error?.message}`, "error");
  } catch (err) {
    host.toast(`${FAILED[type]}: ${(err as Error).message}`, "error");
  }
}

function confirmKill(host: LifecycleHost, agent: AgentState): Promise<boolean> {
  return confirmAction({
    title: `Kill ${host.label(agent)}?`,
    lines: ["Its runtime stops at once, a running turn with it.", "The agent and its session are kept; a prompt starts it again."],
    action: "Kill",
  });
}

function confirmRemove(host: LifecycleHost, agent: AgentState): Promise<boolean> {
  const kids = [...host.agents.values()].filter((a) => descends(host.agents, a, agent.id)).length;
  const running = idleReason(agent.info.runtime_state || "running", "stop") === null;
  return confirmAction({
    title: `Remove ${host.label(agent)}${kids ? ` and its ${kids} subagent${kids > 1 ? "s" : ""}` : ""}?`,
    lines: [
      running ? "Its runtime is stopped first, a running turn with it." : null,
      "It leaves the agent list, for every client.",
      "Its session is kept: Sessions on an agent of the same folder opens it again.",
    ].filter((line): line is string => line !== null),
    action: "Remove",
  });
}

const FAILED = { "agent.terminate": "Could not stop the agent", "agent.kill": "Could not kill the agent", "agent.remove": "Could not remove the agent" };

function doneText(type: string, data: { removed?: string[]; forgotten?: boolean; deferred?: boolean } = {}): string {
  if (type === "agent.kill") return "Agent killed";
  if (type === "agent.remove") {
    const more = (data.removed || []).length - 1;
    return more > 0 ? `Agent removed with its ${more} subagent${more > 1 ? "s" : ""}` : "Agent removed";
  }
  if (data.forgotten) return "Agent removed (it never ran; its session is kept)";
  return data.deferred ? "Agent stops when its turn ends" : "Agent stopped";
}

// An agent as plain JSON, for the recorded-stream tests: the twin of shard.testing.streams.agent_view
// (Python), field for field, so both clients' folds are compared with the same expected state.
import type { AgentState } from "./agent";
import type { Block, Message } from "./wire";

export function agentView(agent: AgentState): Record<string, unknown> {
  const t = agent.transcript;
  return {
    status: agent.status,
    status_detail: agent.statusDetail,
    mode: agent.mode,
    runtime_epoch: agent.epoch,
    capabilities: agent.capabilities === null ? null : [...agent.capabilities].sort(),
    pending: [...agent.requests.keys()].sort(),
    queue: agent.queue.map((q) => q.message),
    messages: t.messages.map(message),
    turns: t.turns.map((turn) => [turn.turn_id, turn.last_message_id, turn.usage.output ?? 0]),
    streaming: Object.fromEntries([...t.streaming.entries()].map(([id, blocks]) => [id, [...blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b.text).join("")])),
  };
}

function message(m: Message): Record<string, unknown> {
  const calls = m.content.filter((b) => b.type === "tool_call").map((b: Block) => {
    const answer = (b.permission || {}) as { intent?: string; decision?: string };
    return [b.id, b.name, answer.intent || answer.decision || null];
  });
  return {
    id: m.id,
    role: m.role,
    text: m.content.filter((b) => b.type === "text").map((b) => b.text || "").join(""),
    tool_calls: calls,
    tool_results: m.content.filter((b) => b.type === "tool_result").map((b) => [b.tool_call_id, Boolean(b.is_error)]),
    stop_reason: m.stop_reason ?? null,
  };
}

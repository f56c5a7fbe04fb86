// What the agent changed: every file a tool call wrote or edited in the conversation the store holds
// (its live window: after a compaction, the kept part), each with the diffs of its edits in order.
// From the diff RenderDescriptors the calls carry (a result's render supersedes its call's preview).
import type { AgentState } from "./agent";
import type { Block } from "./wire";

export interface Edit {
  toolCallId: string;
  tool: string;
  hunks: { old_start: number; old_lines: number; new_start: number; new_lines: number; lines: string[] }[];
}

export interface FileChange {
  path: string;
  edits: Edit[];
  added: number;
  removed: number;
}

interface DiffRender {
  kind: "diff";
  path: string;
  hunks: Edit["hunks"];
}

function isDiff(render: unknown): render is DiffRender {
  return !!render && typeof render === "object" && (render as { kind?: string }).kind === "diff" && Array.isArray((render as DiffRender).hunks);
}

export function changesOf(agent: AgentState): FileChange[] {
  const calls = new Map<string, { tool: string; render: DiffRender | null }>();
  const order: string[] = [];
  for (const message of agent.transcript.messages) {
    for (const block of message.content as Block[]) {
      if (block.type === "tool_call" && block.id) {
        if (!calls.has(block.id)) order.push(block.id);
        calls.set(block.id, { tool: block.name || "", render: isDiff(block.render) ? block.render : calls.get(block.id)?.render || null });
      } else if (block.type === "tool_result" && block.tool_call_id && isDiff(block.render)) {
        const call = calls.get(block.tool_call_id);
        if (!call) order.push(block.tool_call_id);
        calls.set(block.tool_call_id, { tool: call?.tool || "", render: block.render });
      }
    }
  }
  const files = new Map<string, FileChange>();
  for (const id of order) {
    const call = calls.get(id);
    if (!call || !call.render) continue;
    const file = files.get(call.render.path) || { path: call.render.path, edits: [], added: 0, removed: 0 };
    file.edits.push({ toolCallId: id, tool: call.tool, hunks: call.render.hunks });
    for (const hunk of call.render.hunks)
      for (const line of hunk.lines) {
        if (line.startsWith("+")) file.added += 1;
        else if (line.startsWith("-")) file.removed += 1;
      }
    files.set(file.path, file);
  }
  return [...files.values()];
}

// The conversation as a client sees it: a pure fold of `sync` and the events after it — the twin of
// the Python SDK's shard.client.transcript.Transcript, held to the same recorded streams
// (tests/fixtures/streams, web/test/fixtures.test.ts and tests/client/test_stream_fixtures.py).
// `sync` replaces everything (its window, and the text so far of a message in flight); a delta grows
// the in-flight message; message_complete settles it (replacing a known message of that id, never
// adding a second). tool_call, permission_resolved and tool_result put on the window's blocks what a
// later sync carries, and turn_end adds the turn's usage after the message last at its end: so the
// fold of a turn's live events equals the fold of a later sync.
import type { Block, Event, Message, StreamingBlock, TurnSummary } from "./wire";

export interface LiveBlock {
  kind: string;
  text: string;
  tool_call_id: string | null;
  name: string | null;
  args_text: string;
}

export interface Transcript {
  messages: Message[];
  turns: TurnSummary[];
  streaming: Map<string, Map<number, LiveBlock>>;
  compactionIndex: number | null;
  mismatches: string[];
  syncs: number;
  /** bumped on every change: a view re-renders only when it moved */
  version: number;
  /** bumped on every change but a delta's: a view of the settled messages skips the others */
  settled: number;
}

const CALL = ["render", "read_only", "sandboxed", "unknown_render"]; // of a tool_call, kept on its block
const RESULT = ["exit_code", "duration_ms", "render", "images", "unknown_render"]; // of a tool_result
const ANSWER = ["request_id", "decision", "choice_id", "source", "source_label", "intent"]; // of a permission_resolved

export function emptyTranscript(): Transcript {
  return { messages: [], turns: [], streaming: new Map(), compactionIndex: null, mismatches: [], syncs: 0, version: 0, settled: 0 };
}

export function liveText(blocks: Map<number, LiveBlock> | undefined): string {
  if (!blocks) return "";
  return [...blocks.entries()].sort(([a], [b]) => a - b).filter(([, b]) => b.kind === "text").map(([, b]) => b.text).join("");
}

/** The text blocks of `message`, joined (what its text deltas add up to). */
export function messageText(message: Message): string {
  return message.content.filter((b) => b.type === "text").map((b) => b.text || "").join("");
}

/** Folds one event into `t` in place; true when it changed anything. */
export function foldTranscript(t: Transcript, ev: Event): boolean {
  switch (ev.type) {
    case "sync": {
      t.syncs += 1;
      const window = ev.live_window || { messages: [] };
      t.messages = [...(window.messages || [])];
      t.turns = [...(window.turns || [])];
      t.compactionIndex = window.compaction_index ?? null;
      t.streaming = new Map();
      if (ev.streaming) {
        const blocks = new Map<number, LiveBlock>();
        (ev.streaming.blocks as StreamingBlock[]).forEach((b, i) => blocks.set(i, { kind: b.kind, text: b.text || "", tool_call_id: b.tool_call_id ?? null, name: b.name ?? null, args_text: b.args_text || "" }));
        t.streaming.set(ev.streaming.message_id, blocks);
      }
      break;
    }
    case "message_delta": {
      let blocks = t.streaming.get(ev.message_id);
      if (!blocks) t.streaming.set(ev.message_id, (blocks = new Map()));
      let block = blocks.get(ev.block_index);
      if (!block) blocks.set(ev.block_index, (block = { kind: ev.kind, text: "", tool_call_id: null, name: null, args_text: "" }));
      block.text += ev.text_delta || "";
      block.args_text += ev.args_delta || "";
      block.tool_call_id = ev.tool_call_id || block.tool_call_id;
      block.name = ev.name || block.name;
      break;
    }
    case "message_complete": {
      const message = ev.message as Message;
      const live = t.streaming.get(message.id);
      t.streaming.delete(message.id);
      if (live && liveText(live) !== messageText(message)) t.mismatches.push(message.id);
      const at = t.messages.findIndex((m) => m.id === message.id);
      if (at >= 0) t.messages[at] = message;
      else t.messages.push(message);
      break;
    }
    case "tool_call":
      if (!onCall(t, ev.tool_call_id, pick(ev, CALL))) return false;
      break;
    case "permission_resolved":
      if (!ev.tool_call_id || !onCall(t, ev.tool_call_id, { permission: pick(ev, ANSWER) })) return false;
      break;
    case "tool_result": {
      if (!ev.message_id) return false;
      const block: Block = { type: "tool_result", tool_call_id: ev.tool_call_id, content: ev.content, is_error: ev.is_error, ...pick(ev, RESULT) };
      t.messages.push({ id: ev.message_id, role: "user", content: [block] });
      break;
    }
    case "turn_end":
      if (!ev.usage || !t.messages.length) return false;
      t.turns.push({ turn_id: ev.turn_id, last_message_id: t.messages[t.messages.length - 1].id, usage: ev.usage });
      break;
    default:
      return false;
  }
  t.version += 1;
  if (ev.type !== "message_delta") t.settled += 1;
  return true;
}

function pick(ev: Event, names: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) if (ev[name] !== undefined && ev[name] !== null) out[name] = ev[name];
  return out;
}

// Sets `fields` on the tool_call block of `id`, the latest message first: a new message object
// (views compare by identity).
function onCall(t: Transcript, id: string, fields: Record<string, unknown>): boolean {
  for (let i = t.messages.length - 1; i >= 0; i--) {
    const message = t.messages[i];
    if (!message.content.some((b) => b.type === "tool_call" && b.id === id)) continue;
    t.messages[i] = { ...message, content: message.content.map((b) => (b.type === "tool_call" && b.id === id ? { ...b, ...fields } : b)) };
    return true;
  }
  return false;
}

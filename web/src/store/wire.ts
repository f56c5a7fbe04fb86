// The protocol's messages as the store reads them (PROTOCOL §9–§11, /work/shared/PROTOCOL.md). Only
// the fields the store folds are typed; everything else rides along untouched, so a newer daemon's
// additive fields never break the page.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type AgentStatus = "idle" | "streaming" | "waiting_for_permission" | "waiting_for_ui" | "compacting" | "error" | string;
export type RuntimeState = "running" | "stopping" | "stopped" | "failed" | string;

export interface Usage {
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
  cost?: number;
  context_tokens?: number;
  context_window?: number;
  context_window_source?: string;
  model?: string;
}

export interface AgentInfo {
  agent_id: string;
  name?: string;
  cwd: string;
  model?: string;
  provider?: string;
  mode?: string;
  status: AgentStatus;
  runtime_state?: RuntimeState;
  created_at?: number;
  usage?: Usage;
  parent_agent_id?: string;
  alias?: string;
  definition_name?: string;
  display_name?: string;
  /** the [[hosts]] machine it runs on (over SSH); absent: the daemon's own */
  host?: string;
  workspace_id?: string;
}

export interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  args?: Record<string, unknown>;
  tool_call_id?: string;
  content?: unknown;
  is_error?: boolean;
  permission?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface Message {
  id: string;
  role: string;
  content: Block[];
  stop_reason?: string | null;
  [extra: string]: unknown;
}

export interface TurnSummary {
  turn_id: string;
  last_message_id: string;
  usage: Usage;
}

export interface LiveWindow {
  messages: Message[];
  turns?: TurnSummary[];
  compaction_index?: number | null;
}

export interface StreamingBlock {
  kind: string;
  text?: string | null;
  tool_call_id?: string | null;
  name?: string | null;
  args_text?: string | null;
}

export interface Request {
  type: "permission_request" | "ui_request";
  request_id: string;
  agent_id?: string;
  tool_name?: string;
  tool_call_id?: string;
  kind?: string;
  title?: string;
  choices?: { id: string; label: string; intent: string; accelerator?: string; description?: string }[];
  [extra: string]: unknown;
}

export interface QueuedMessage {
  queue_id: string;
  message: string;
  behavior: string;
  images?: { type: string; data: string; mime_type: string }[] | null;
  queued_at?: number;
  source?: string | null;
}

/** Any message from the daemon: a `type`, often an `agent_id`, and the rest. */
export interface Event {
  type: string;
  agent_id?: string;
  [field: string]: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the wire is open
}

// What one item of the conversation shows, as Preact components: a message (its role, its blocks,
// why it stopped, Fork), a message still streaming, a tool call's card, a turn's usage. Each is
// rendered into its own <li>, which the conversation list (conversation.tsx) keeps, orders and
// virtualizes; the list re-renders an item only when what it shows changed (a new message object,
// a new result for one of its calls), and a delta re-renders only the streaming message.
//
// Untrusted text stays text: JSX puts strings in text nodes; model markdown goes through
// renderMarkdown (markdown-it without raw HTML, then DOMPurify) and is inserted as the DOM fragment
// it returns; render descriptors and diffs are built by descriptors.ts / diff.ts, text nodes only.
import type { ComponentChildren, VNode } from "preact";
import { Foreign } from "./Foreign";
import type { LiveBlock } from "../store/transcript";
import type { Block, Message, Usage } from "../store/wire";
import { h } from "../dom.js";
import { footer as footerLine, footerText, renderDescriptor } from "./descriptors.js";
import { diffStat, type Hunk } from "./diff";
import { renderMarkdown } from "./markdown";
import { resolutionText, tokens } from "../words.js";
import { tokensIn } from "../store/agent";

/** Whose answer a resolution is ("… by you" when this page gave it). */
export type Mine = (answer: { source?: string }) => boolean;

// The model's markdown, placed by a ref (one per text block, so a re-render of its message with the
// same block places nothing): no component per block, which would cost each of 5,000 messages an
// instance kept for as long as the message is rendered.
const markdownRefs = new WeakMap<Block, (el: HTMLElement | null) => void>();

function markdownRef(block: Block): (el: HTMLElement | null) => void {
  let ref = markdownRefs.get(block);
  if (!ref) {
    ref = (el) => el?.replaceChildren(renderMarkdown(block.text || ""));
    markdownRefs.set(block, ref);
  }
  return ref;
}

function textBlock(block: Block, role: string, key: number): VNode {
  // the model's text is markdown; what a person typed is shown as typed
  if (role === "assistant") return <div key={key} class="text markdown" ref={markdownRef(block)} />;
  return (
    <div key={key} class="text">
      {block.text}
    </div>
  );
}

function Thinking({ text, open }: { text: string; open?: boolean }) {
  return (
    <details class="thinking" open={open}>
      <summary>Thinking</summary>
      <div class="text">{text}</div>
    </details>
  );
}

/** A tool call as its card: one line (name, arguments, state, answer, time) over its render and result. */
export function ToolCard({ call, result, running, answer: given, mine, argsText }: { call: Block; result?: Block; running: boolean; answer?: Record<string, unknown>; mine: Mine; argsText?: string }) {
  const render = call.render as { kind?: string; hunks?: Hunk[] } | undefined;
  const resultRender = result?.render;
  const exit = result?.exit_code as number | null | undefined;
  const took = result?.duration_ms as number | null | undefined;
  const failed = exit !== undefined && exit !== null && exit !== 0;
  const state = result ? (result.is_error ? "error" : "done") : running ? "running" : "pending";
  const classes = ["tool", call.read_only === true && "read-only", result?.is_error && "error", failed && "failed"].filter(Boolean).join(" ");
  const footer = exit !== undefined || took !== undefined;
  const permission = call.permission || given;
  const answer = permission ? resolutionText(permission, null, mine(permission as { source?: string })) : "";
  // a diff opens its card, so an edit is read without a click; a failure too: it is what a reader looks for
  const open = render?.kind === "diff" || !!result?.is_error || failed;
  return (
    <div class={classes} data-tool-call-id={call.id || ""} data-state={state}>
      <details class="tool-details" open={open || undefined}>
        <summary class="tool-head">
          <span class="tool-state" aria-hidden="true" />
          <span class="tool-name">{call.name || ""}</span> <code class="tool-args">{argsText ?? argsOf(call.args)}</code>
          <span class="tool-summary">{render?.kind === "diff" ? diffStat(render.hunks || []) : ""}</span>
          <span class="tool-answer" hidden={!answer}>
            {answer}
          </span>
          <span class="tool-took">{footer ? footerText(exit, took) : ""}</span>
        </summary>
        {/* the start-time preview is for before the result lands (§9.4): a result render supersedes it */}
        <Foreign class="tool-render" hidden={!!resultRender} value={render} make={descriptor} />
        <Foreign class="tool-result" value={result} make={resultParts} />
      </details>
    </div>
  );
}

function descriptor(d: unknown): Node {
  return d ? renderDescriptor(d) : document.createDocumentFragment();
}

// A result as DOM: its render (superseding the start-time preview), its content, exit code and time.
function resultParts(result: Block | undefined): Node {
  const parts = document.createDocumentFragment();
  if (!result) return parts;
  if (result.render) parts.append(renderDescriptor(result.render));
  const c = result.content as { kind?: string; text?: string; message?: string; value?: unknown } | undefined;
  if (!c) parts.append(h("pre", {}, ""));
  else if (c.kind === "text") parts.append(h("pre", { class: "result-text" }, c.text));
  else if (c.kind === "error") parts.append(h("pre", { class: "result-error" }, c.message));
  else parts.append(h("pre", { class: "result-json" }, JSON.stringify(c.value, null, 2)));
  const exit = result.exit_code as number | null | undefined;
  const took = result.duration_ms as number | null | undefined;
  if (exit !== undefined || took !== undefined) parts.append(footerLine(exit, took));
  return parts;
}

export interface MessageProps {
  message: Message;
  /** the result of each of its tool calls that has one, by call id */
  results: Map<string, Block>;
  running: ReadonlySet<string>;
  answers: ReadonlyMap<string, Record<string, unknown>>;
  mine: Mine;
}

/** A settled message: "You" or "Agent", its blocks, why it stopped early, Fork. Called as a
 * function, not mounted as a component: the list decides when it is rendered again. */
export function messageBody({ message, results, running, answers, mine }: MessageProps): VNode {
  const stop = stopMarker(message);
  return (
    <>
      <span class="role">{message.role === "user" ? "You" : "Agent"}</span>
      {message.content
        .filter((b) => b.type !== "tool_result") // a result shows inside its call's card
        .map((b, i) => {
          if (b.type === "text") return textBlock(b, message.role, i);
          if (b.type === "thinking") return <Thinking key={i} text={b.text || ""} />;
          if (b.type === "tool_call") return <ToolCard key={b.id || i} call={b} result={results.get(b.id || "")} running={running.has(b.id || "")} answer={answers.get(b.id || "")} mine={mine} />;
          return <pre key={i}>{JSON.stringify(b)}</pre>;
        })}
      {stop}
      {/* its click is the list's (one listener for every message: conversation.tsx) */}
      <button type="button" class="fork" title="Fork a new session from this message">
        Fork
      </button>
    </>
  );
}

/** A message in flight: its blocks as they stream (plain text until message_complete settles it). */
export function streamingBody(blocks: Map<number, LiveBlock>, mine: Mine): VNode {
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b);
  return (
    <>
      {ordered.map(([i, b]) => {
        if (b.kind === "thinking") return <Thinking key={i} text={b.text} open />;
        if (b.kind === "tool_call") return <ToolCard key={i} call={{ type: "tool_call", id: b.tool_call_id || "", name: b.name || "" }} running={false} mine={mine} argsText={b.args_text} />;
        return (
          <div key={i} class="text">
            {b.text}
          </div>
        );
      })}
    </>
  );
}

export function usageText(u: Usage): string {
  const cost = u.cost ? ` · $${u.cost.toFixed(4)}` : "";
  return `turn: ${tokens(tokensIn(u))} in · ${tokens(u.output)} out${cost}`;
}

// Why a reply ended early (the additive Message.stop_reason; absent means completed): a small muted
// line under it, the same live (message_complete) and after a reload (sync's live window)
const STOPS: Record<string, string> = { aborted: "Stopped by you", interrupted: "Interrupted", max_tokens: "Cut off: max tokens", failed: "Failed" };

function stopMarker(message: Message): ComponentChildren {
  const reason = message.stop_reason;
  if (message.role !== "assistant" || !reason || reason === "completed") return null;
  const detail = reason === "failed" && message.stop_detail ? `: ${message.stop_detail}` : "";
  return <div class={`stop-reason stop-${reason}`}>{(STOPS[reason] || reason) + detail}</div>;
}

export function argsOf(args: unknown): string {
  if (!args || typeof args !== "object") return "";
  return Object.entries(args)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
}

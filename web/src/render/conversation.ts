// One agent's conversation as DOM, updated incrementally (PROTOCOL §9.4): a delta appends to one
// text node, message_complete re-renders that one message from the final snapshot, sync reconciles
// the whole window by message id. Every message and tool card is keyed by its id, so a replayed
// event or a resync after reconnect can update an element but never add a second one.
//
// Windowed: a long window is not rendered whole. A sync renders the last FIRST_WINDOW messages (or
// from the earliest message already on screen); the earlier ones wait, as data, in `earlier` until
// the reader scrolls to the top or presses "Show earlier messages", which renders PAGE more above.
// Live events only ever touch the end, so they never meet the unrendered part.
//
// Virtualized once rendered: a conversation of more than ALL_UP_TO items keeps in the DOM only the
// KEEP items on either side of the one at the top of the viewport; the others are detached (kept,
// as elements, in `above` and `below`, each with the height it had) and two spacers stand for their
// height, so the scrollbar stays true. Scrolling moves the window; every per-frame cost of the page
// (style, layout, paint, the compositor's cull rects) then depends on a few hundred items, not on the
// length of the session. The elements themselves are never re-created: a detached message is the
// same element when it comes back, and the live events (which find elements by id) update it there.
//
// Deltas are coalesced: a delta goes into `pending` and at most every DELTA_INTERVAL ms one flush
// appends each block's text at once and, when the reader was at the bottom, scrolls to follow. One
// repaint per flush instead of one per delta is what keeps a streaming page's main thread mostly idle.
//
// A card looks the same live and after a reload: the sync window's blocks carry what the live events
// did (a tool_call block its start-time render, read_only and the permission answer; a tool_result
// block its exit code, duration and render), and window.turns each turn's usage, shown after the
// turn's last message as turn_end showed it live.
import { h, tokensIn, type Child } from "../dom.js";
import type { Block, Event, LiveWindow, Message, TurnSummary, Usage } from "../store/wire";
import type { Hunk } from "./diff";
import { footer, footerText, renderDescriptor } from "./descriptors.js";
import { diffStat } from "./diff";
import { renderMarkdown } from "./markdown";
import { resolutionText, tokens } from "../words.js";

export const FIRST_WINDOW = 100; // messages rendered when a conversation is first synced
export const PAGE = 100; // messages rendered per "show earlier"
const SMALL = 10; // fewer unrendered messages than this are rendered at once: no button for a handful
export const ALL_UP_TO = 400; // a conversation of up to this many items keeps all of them in the DOM
export const KEEP = 100; // beyond it, this many items stay rendered on either side of the viewport
const SLACK = 16; // the window moves once it is this many items off centre (a small batch at a time)
export const DELTA_INTERVAL = 50; // ms between two flushes of streamed text (20 a second)
export const AT_BOTTOM = 80; // px: a reader this close to the end is following the stream

/** A tool call's card, with what its result said kept for a later re-render */
type Card = HTMLElement & { resultRender?: unknown; footer?: [number | undefined, number | undefined] };
type Partial = { li: HTMLElement; blocks: Map<number, { node: Text; el: HTMLElement }> };

function part(root: Element, selector: string): HTMLElement {
  return root.querySelector(selector) as HTMLElement;
}

export class Conversation {
  el: HTMLElement = h("ol", { class: "conversation" });
  messages = new Map<string, HTMLElement>(); // message id -> <li> (rendered messages only)
  partials = new Map<string, Partial>(); // message id -> its <li> and its blocks as they stream
  tools = new Map<string, Card>(); // tool_call_id -> card element
  turns = new Map<string, HTMLElement>(); // turn id -> its usage line
  turnsAfter = new Map<string, TurnSummary[]>(); // message id -> the synced turns it ended (their usage goes after it)
  earlier: Message[] = []; // window messages above the first rendered one, oldest first, not in the DOM
  compactionIndex: number | null = null;
  firstId: string | null = null;
  more: HTMLElement;
  onFork: (messageId: string) => void;
  mine: (answer: { source?: string }) => boolean;
  above: HTMLElement[] = []; // items detached above the rendered ones, in order (virtualized)
  below: HTMLElement[] = []; // and below them
  heights = new WeakMap<HTMLElement, number>(); // an item's height (to the next one's top) when last rendered
  topSpacer: HTMLElement = h("li", { class: "spacer", "aria-hidden": "true" });
  bottomSpacer: HTMLElement = h("li", { class: "spacer", "aria-hidden": "true" });
  allUpTo = ALL_UP_TO;
  keep = KEEP;
  slack = SLACK;
  pending = new Map<Text, string>(); // streamed text not yet appended, by the text node it goes to
  flushTimer: ReturnType<typeof setTimeout> | null = null;
  lastFlush = -Infinity;

  constructor(onFork: (messageId: string) => void) {
    this.more = h("li", { class: "show-earlier" }, h("button", { type: "button", onclick: () => this.showEarlier() }, "Show earlier messages"));
    this.el.addEventListener("scroll", () => {
      if (this.earlier.length && this.el.scrollTop < 120) this.showEarlier();
      this.virtualize();
    }, { passive: true });
    this.onFork = onFork;
    this.mine = () => false; // whether this page answered (main.js: its hello.client_ids): "… by you"
  }

  // --- whole-window reconcile (sync) ------------------------------------------------------------

  sync(window: LiveWindow): void {
    this.restore(); // the reconcile below places elements next to each other: all of them in the DOM
    const list = window.messages;
    this.turnsAfter = new Map();
    for (const turn of window.turns || []) {
      if (!this.turnsAfter.has(turn.last_message_id)) this.turnsAfter.set(turn.last_message_id, []);
      this.turnsAfter.get(turn.last_message_id)!.push(turn);
    }
    const keep = new Set(list.map((m) => m.id));
    for (const [id, li] of this.messages) {
      if (!keep.has(id)) {
        li.remove();
        this.messages.delete(id);
      }
    }
    // Rendering starts at the earliest message already shown (so a reconnect leaves no gap), or,
    // on a first sync, FIRST_WINDOW messages from the end; everything above waits in `earlier`.
    let cut = list.findIndex((m) => this.messages.has(m.id));
    if (cut < 0) cut = Math.max(0, list.length - FIRST_WINDOW);
    if (cut < SMALL) cut = 0;
    this.earlier = list.slice(0, cut);
    if (this.earlier.length) this.el.prepend(this.more);
    else this.more.remove();
    // Messages already shown stay where they are (with the usage lines and notes between them);
    // a new one goes right after its predecessor in the window. In-flight messages stay last.
    let previous: HTMLElement | null = null;
    for (const message of list.slice(cut)) {
      const partial = this.partials.get(message.id); // completed while this page was away
      if (partial) {
        partial.li.remove();
        this.partials.delete(message.id);
      }
      const li = this.upsert(message);
      if (li.parentNode !== this.el) {
        if (previous) previous.after(li);
        else if (this.earlier.length) this.more.after(li);
        else this.el.prepend(li);
      }
      previous = li;
      for (const usage of this.usageAfter(message.id)) {
        if (usage.parentNode !== this.el) previous.after(usage);
        previous = usage;
      }
    }
    // compaction_index is the ordinal of the compaction that shaped the window, whose first
    // message is then that compaction's summary: one marker above it stands for every earlier one
    for (const marker of this.el.querySelectorAll(":scope > .compaction-marker")) marker.remove();
    this.compactionIndex = window.compaction_index ?? null;
    this.firstId = list.length ? list[0].id : null;
    this.placeMarker();
  }

  placeMarker(): void {
    const first = this.firstId === null ? undefined : this.messages.get(this.firstId);
    if (this.compactionIndex === null || this.earlier.length || !first) return;
    const marker = h("li", { class: "compaction-marker from-sync" }, `Compacted (${this.compactionIndex}): the summary below stands for the earlier messages`);
    const at = this.above.indexOf(first);
    if (at >= 0) this.above.splice(at, 0, marker);
    else first.before(marker);
  }

  // Render up to `count` more of the earlier messages above the rendered ones, keeping what the
  // reader looks at where it is.
  showEarlier(count = PAGE): void {
    if (!this.earlier.length) return;
    const batch = this.earlier.splice(Math.max(0, this.earlier.length - count));
    const height = this.el.scrollHeight;
    const top = this.el.scrollTop;
    const items: HTMLElement[] = [];
    for (const message of batch) items.push(this.upsert(message), ...this.usageAfter(message.id));
    // virtualized and scrolled away from the top: the new rows wait above with the other detached ones
    if (this.above.length) this.detachAbove(items);
    else this.more.after(...items);
    if (!this.earlier.length) {
      this.more.remove();
      this.placeMarker();
    }
    this.el.scrollTop = top + (this.el.scrollHeight - height);
  }

  // --- live events ------------------------------------------------------------------------------

  complete(message: Message): void {
    const partial = this.partials.get(message.id);
    this.partials.delete(message.id);
    const li = this.upsert(message);
    if (partial && partial.li !== li) this.replace(partial.li, li);
    else if (!this.holds(li)) this.push(li);
  }

  delta(ev: Event): void {
    if (this.messages.has(ev.message_id)) return; // already complete: the snapshot is the truth
    let partial = this.partials.get(ev.message_id);
    if (!partial) {
      const li = h("li", { class: "message assistant streaming", dataset: { id: ev.message_id } });
      partial = { li, blocks: new Map() };
      this.partials.set(ev.message_id, partial);
      this.push(li);
    }
    let block = partial.blocks.get(ev.block_index);
    if (!block) {
      block = this.newBlock(ev);
      partial.blocks.set(ev.block_index, block);
      partial.li.append(block.el);
    }
    const text = ev.kind === "tool_call" ? ev.args_delta : ev.text_delta;
    if (!text) return;
    this.pending.set(block.node, (this.pending.get(block.node) || "") + text);
    // the first delta after a pause shows at once; those that follow wait for the next flush
    this.flushTimer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + DELTA_INTERVAL - performance.now()));
  }

  /** Appends the streamed text held since the last flush (one append per block) and, when the
   * reader was at the bottom, follows it: one layout and one repaint for every delta in between. */
  flush(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (!this.pending.size) return;
    this.lastFlush = performance.now();
    const follow = this.el.isConnected && !this.below.length && this.atBottom();
    for (const [node, text] of this.pending) node.appendData(text); // a node replaced meanwhile is detached: harmless
    this.pending.clear();
    if (follow) this.el.scrollTop = this.el.scrollHeight;
  }

  atBottom(): boolean {
    return this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight <= AT_BOTTOM;
  }

  newBlock(ev: Event): { node: Text; el: HTMLElement } {
    const node = document.createTextNode("");
    if (ev.kind === "thinking") {
      return { node, el: h("details", { class: "thinking", open: true }, h("summary", {}, "Thinking"), h("div", { class: "text" }, node)) };
    }
    if (ev.kind === "tool_call") {
      const card = this.card(ev.tool_call_id, ev.name);
      part(card, ".tool-args").replaceChildren(node);
      return { node, el: card };
    }
    return { node, el: h("div", { class: "text" }, node) };
  }

  toolCall(ev: Event): void {
    const card = this.card(ev.tool_call_id, ev.name);
    if (!this.holds(card)) this.push(h("li", { class: "message assistant" }, card));
    part(card, ".tool-args").textContent = argsText(ev.args);
    card.classList.toggle("read-only", ev.read_only === true);
    if (card.dataset.state !== "done") card.dataset.state = "running";
    if (ev.render) this.setRender(card, ev.render);
  }

  // A call's start-time render (a diff to be applied, a command): shown in its card, open when it
  // is a diff, so an edit is read without a click
  setRender(card: Card, render: { kind?: string; hunks?: Hunk[] }): void {
    part(card, ".tool-render").replaceChildren(renderDescriptor(render));
    if (render.kind === "diff") {
      (part(card, ".tool-details") as HTMLDetailsElement).open = true;
      part(card, ".tool-summary").textContent = diffStat(render.hunks || []);
    }
  }

  // live: a tool_result event (its card goes at the end if its call is not shown); not live: a
  // tool_result block of a synced message, whose call may be among the earlier, unrendered ones
  toolResult(ev: Event | Block, live = true): void {
    const card = this.card(ev.tool_call_id, "");
    if (live && !this.holds(card)) this.push(h("li", { class: "message assistant" }, card));
    card.dataset.state = ev.is_error ? "error" : "done";
    card.classList.toggle("error", !!ev.is_error);
    // a failure (an error, a command's non-zero exit) opens its card: it is what a reader looks for
    const failed = ev.exit_code !== undefined && ev.exit_code !== null && ev.exit_code !== 0;
    card.classList.toggle("failed", failed);
    if (ev.is_error || failed) (part(card, ".tool-details") as HTMLDetailsElement).open = true;
    // a synced tool_result block carries them too; one from an older session has none: keep what was shown
    if (ev.render) card.resultRender = ev.render;
    if (ev.exit_code !== undefined || ev.duration_ms !== undefined) card.footer = [ev.exit_code, ev.duration_ms];
    const parts = [];
    if (card.resultRender) parts.push(renderDescriptor(card.resultRender));
    // the start-time preview is for before the result lands (§9.4): a result render supersedes it
    part(card, ".tool-render").hidden = !!card.resultRender;
    parts.push(resultContent(ev.content));
    if (card.footer) parts.push(footer(...card.footer));
    part(card, ".tool-result").replaceChildren(...parts);
    part(card, ".tool-took").textContent = card.footer ? footerText(...card.footer) : "";
  }

  turnEnd(ev: Event): void {
    if (!ev.usage || this.turns.has(ev.turn_id)) return;
    this.push(this.usageLine(ev.turn_id, ev.usage));
  }

  // The usage lines of the turns a synced message ended (made once per turn: a line shown live stays)
  usageAfter(messageId: string): HTMLElement[] {
    return (this.turnsAfter.get(messageId) || []).map((turn) => this.turns.get(turn.turn_id) || this.usageLine(turn.turn_id, turn.usage));
  }

  usageLine(turnId: string, u: Usage): HTMLElement {
    const cost = u.cost ? ` · $${u.cost.toFixed(4)}` : "";
    const li = h("li", { class: "turn-usage", dataset: { turn: turnId } }, `turn: ${tokens(tokensIn(u))} in · ${tokens(u.output)} out${cost}`);
    this.turns.set(turnId, li);
    return li;
  }

  // How the permission request of a tool call was answered, and by whom: on its card, from
  // permission_resolved live and from the call's synced block after a reload
  answered(toolCallId: string, answer: Record<string, unknown>): void {
    const el = part(this.card(toolCallId, ""), ".tool-answer");
    el.textContent = resolutionText(answer, null, this.mine(answer)); // "Allowed by Chrome on Linux"
    el.hidden = false;
  }

  compaction(ev: Event): void {
    this.push(h("li", { class: "compaction-marker" }, `Compacted: ${ev.tokens_before} → ${ev.tokens_after} tokens`));
  }

  note(content: Child, kind = "note"): void {
    this.push(h("li", { class: `note note-${kind}` }, content));
  }

  // --- virtualization ---------------------------------------------------------------------------

  /** Adds an item at the end: in the DOM, or (the reader being far above) to the detached ones below. */
  push(item: HTMLElement): void {
    if (!this.below.length) {
      this.el.append(item);
      return;
    }
    this.below.push(item);
    this.sizeSpacers();
  }

  /** Whether `node` is in the conversation, rendered or detached. */
  holds(node: Node): boolean {
    if (this.el.contains(node)) return true;
    let item: Node = node;
    while (item.parentNode) item = item.parentNode;
    return this.above.includes(item as HTMLElement) || this.below.includes(item as HTMLElement);
  }

  replace(old: HTMLElement, item: HTMLElement): void {
    for (const list of [this.above, this.below]) {
      const at = list.indexOf(old);
      if (at >= 0) {
        list[at] = item;
        return;
      }
    }
    if (old.parentNode === this.el) old.replaceWith(item);
    else this.push(item);
  }

  detachAbove(items: HTMLElement[]): void {
    this.above.unshift(...items);
    this.sizeSpacers();
  }

  /** Every detached item back in the DOM, in its place (before a reconcile). */
  restore(): void {
    if (this.above.length) this.topSpacer.replaceWith(...this.above);
    if (this.below.length) this.bottomSpacer.replaceWith(...this.below);
    this.above = [];
    this.below = [];
    this.topSpacer.remove();
    this.bottomSpacer.remove();
  }

  /** The items in the DOM, in order (not the "show earlier" row nor the spacers). */
  rendered(): HTMLElement[] {
    return ([...this.el.children] as HTMLElement[]).filter((c) => c !== this.more && c !== this.topSpacer && c !== this.bottomSpacer);
  }

  height(item: HTMLElement): number {
    return this.heights.get(item) ?? this.estimate;
  }

  estimate = 60; // px: the height assumed for an item never rendered (the mean of those measured)
  measured = 0;
  count = 0;

  spacerHeight(items: HTMLElement[]): number {
    let sum = 0;
    for (const item of items) sum += this.height(item);
    return sum;
  }

  sizeSpacers(): void {
    this.topSpacer.style.height = `${this.spacerHeight(this.above)}px`; // CSSOM, which the CSP allows
    this.bottomSpacer.style.height = `${this.spacerHeight(this.below)}px`;
  }

  // Moves the rendered window to KEEP items on either side of the item at the top of the viewport
  // (on every scroll; it does nothing until the window is SLACK items off centre), keeping that
  // item where the reader sees it.
  virtualize(): void {
    const el = this.el;
    if (!el.isConnected || !el.clientHeight) return;
    const items = this.rendered();
    const total = this.above.length + items.length + this.below.length;
    if (total <= this.allUpTo || !items.length) {
      if (this.above.length || this.below.length) this.restore();
      return;
    }
    const y = el.getBoundingClientRect().top;
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight <= 1; // (a jump to the end stays there)
    // the item at the top of the viewport (global index g), and where its top is from the viewport's
    let g: number;
    let offset: number;
    const inTop = this.above.length > 0 && this.topSpacer.getBoundingClientRect().bottom > y;
    const inBottom = !inTop && this.below.length > 0 && this.bottomSpacer.getBoundingClientRect().top <= y;
    if (inTop || inBottom) {
      const list = inTop ? this.above : this.below;
      let at = (inTop ? this.topSpacer : this.bottomSpacer).getBoundingClientRect().top;
      let i = 0;
      while (i < list.length - 1 && at + this.height(list[i]) <= y) at += this.height(list[i++]);
      g = (inTop ? 0 : this.above.length + items.length) + i;
      offset = at - y;
    } else {
      let lo = 0;
      let hi = items.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (items[mid].getBoundingClientRect().bottom > y) hi = mid;
        else lo = mid + 1;
      }
      g = this.above.length + lo;
      offset = items[lo].getBoundingClientRect().top - y;
    }
    const first = this.above.length;
    const end = first + items.length;
    const from = Math.max(0, g - this.keep);
    const to = Math.min(total, g + this.keep + 1);
    const off = (a: number, b: number, edge: boolean) => Math.abs(a - b) >= this.slack || (edge && a !== b);
    if (!off(from, first, from === 0) && !off(to, end, to === total)) return;
    // the heights of the items leaving the DOM, read now while the layout is clean: to the next one's top
    for (let i = first; i < end; i++) {
      if (i >= from && i < to) continue;
      const item = items[i - first];
      const top = item.getBoundingClientRect().top;
      const next = i + 1 < end ? items[i + 1 - first].getBoundingClientRect().top : item.getBoundingClientRect().bottom;
      this.heights.set(item, next - top);
      this.measured += next - top;
      this.count += 1;
    }
    if (this.count) this.estimate = this.measured / this.count;
    const all = [...this.above, ...items, ...this.below];
    for (let i = first; i < end; i++) if (i < from || i >= to) all[i].remove();
    const head = all.slice(from, Math.min(first, to));
    const tail = all.slice(Math.max(end, from), to);
    const kept = all.slice(Math.max(first, from), Math.min(end, to));
    if (head.length) el.insertBefore(fragment(head), kept[0] ?? (this.bottomSpacer.isConnected ? this.bottomSpacer : null));
    if (tail.length) el.insertBefore(fragment(tail), this.bottomSpacer.isConnected ? this.bottomSpacer : null);
    this.above = all.slice(0, from);
    this.below = all.slice(to);
    this.sizeSpacers();
    if (this.above.length) {
      if (!this.topSpacer.isConnected) el.insertBefore(this.topSpacer, all[from]);
    } else this.topSpacer.remove();
    if (!this.below.length) this.bottomSpacer.remove();
    else if (el.lastElementChild !== this.bottomSpacer) el.append(this.bottomSpacer);
    if (atEnd) el.scrollTop = el.scrollHeight;
    else el.scrollTop += all[g].getBoundingClientRect().top - y - offset; // the item at the top stays there
  }

  // --- building blocks --------------------------------------------------------------------------

  upsert(message: Message): HTMLElement {
    let li = this.messages.get(message.id);
    if (!li) {
      li = h("li", { dataset: { id: message.id } });
      this.messages.set(message.id, li);
    }
    const results = message.content.filter((b) => b.type === "tool_result");
    const onlyResults = message.role === "user" && results.length === message.content.length && results.length > 0;
    li.className = `message ${message.role}`;
    li.hidden = onlyResults; // tool results show inside their tool call's card
    for (const r of results) this.toolResult(r, false); // with the exit code, duration and render it kept
    if (onlyResults) return li;
    const blocks = message.content.filter((b) => b.type !== "tool_result").map((b) => this.block(b, message.role));
    const fork = h("button", { type: "button", class: "fork", title: "Fork a new session from this message", onclick: () => this.onFork(message.id) }, "Fork");
    const stop = stopMarker(message);
    li.replaceChildren(h("span", { class: "role" }, message.role === "user" ? "You" : "Agent"), ...blocks, ...(stop ? [stop] : []), fork);
    return li;
  }

  block(b: Block, role: string): HTMLElement {
    // the model's text is markdown; what a person typed is shown as typed
    if (b.type === "text") return role === "assistant" ? h("div", { class: "text markdown" }, renderMarkdown(b.text || "")) : h("div", { class: "text" }, b.text);
    if (b.type === "thinking") return h("details", { class: "thinking" }, h("summary", {}, "Thinking"), h("div", { class: "text" }, b.text));
    if (b.type === "tool_call") {
      const card = this.card(b.id || "", b.name || "");
      part(card, ".tool-args").textContent = argsText(b.args);
      // what the call's tool_call and permission_resolved showed live, kept in the window
      if (b.read_only !== undefined) card.classList.toggle("read-only", b.read_only === true);
      if (b.render) this.setRender(card, b.render as { kind?: string });
      if (b.permission) this.answered(b.id || "", b.permission);
      return card;
    }
    return h("pre", {}, JSON.stringify(b));
  }

  card(id: string, name: string): Card {
    let card = this.tools.get(id);
    if (!card) {
      // one line (name, arguments, state, answer, time) that opens onto the full render and result
      card = h(
        "div",
        { class: "tool", dataset: { toolCallId: id, state: "pending" } },
        h(
          "details",
          { class: "tool-details" },
          h(
            "summary",
            { class: "tool-head" },
            h("span", { class: "tool-state", "aria-hidden": "true" }),
            h("span", { class: "tool-name" }, name),
            " ",
            h("code", { class: "tool-args" }),
            h("span", { class: "tool-summary" }),
            h("span", { class: "tool-answer", hidden: true }),
            h("span", { class: "tool-took" }),
          ),
          h("div", { class: "tool-render" }),
          h("div", { class: "tool-result" }),
        ),
      );
      this.tools.set(id, card);
    } else if (name) {
      part(card, ".tool-name").textContent = name;
    }
    return card;
  }
}

// Why a reply ended early (the additive Message.stop_reason; absent means completed): a small muted
// line under it, the same live (message_complete) and after a reload (sync's live window)
const STOPS: Record<string, string> = { aborted: "Stopped by you", interrupted: "Interrupted", max_tokens: "Cut off: max tokens", failed: "Failed" };

function stopMarker(message: Message): HTMLElement | null {
  const reason = message.stop_reason;
  if (message.role !== "assistant" || !reason || reason === "completed") return null;
  const text = STOPS[reason] || reason;
  const detail = reason === "failed" && message.stop_detail ? `: ${message.stop_detail}` : "";
  return h("div", { class: `stop-reason stop-${reason}` }, text + detail);
}

function fragment(items: HTMLElement[]): DocumentFragment {
  const rows = document.createDocumentFragment();
  rows.append(...items);
  return rows;
}

function argsText(args: unknown): string {
  if (!args || typeof args !== "object") return "";
  return Object.entries(args)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
}

function resultContent(content: any): HTMLElement { // eslint-disable-line @typescript-eslint/no-explicit-any -- a ToolResultContent
  if (!content) return h("pre", {}, "");
  if (content.kind === "text") return h("pre", { class: "result-text" }, content.text);
  if (content.kind === "error") return h("pre", { class: "result-error" }, content.message);
  return h("pre", { class: "result-json" }, JSON.stringify(content.value, null, 2));
}

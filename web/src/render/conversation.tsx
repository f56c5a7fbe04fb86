// One agent's conversation: a keyed, windowed list of items (messages, streaming messages, tool
// cards without a message, turn usage lines, notes, compaction markers), each item an <li> whose
// content is a Preact component (Message.tsx). The list reads the agent's transcript (the store's
// fold, store/transcript.ts) and reconciles itself with it on update(): a message is rendered once
// per message object (the fold replaces the object when anything of it changes), so a store change
// re-renders only the items that moved; a sync reconciles the whole window by message id, so a
// replayed event or a resync after reconnect can update an item but never add a second one.
//
// The items stay <li> elements owned by the list rather than children of one Preact tree: the
// virtualizer below moves them out of the DOM and back, and an item that comes back must be the
// same element (its markdown, highlighting and open/closed state are not rebuilt on every scroll
// step); Preact re-renders an item's content into it wherever it is.
//
// Windowed: a long window is not rendered whole. A sync renders the last FIRST_WINDOW messages (or
// from the earliest message already on screen); the earlier ones wait, as data, until the reader
// scrolls to the top or presses "Show earlier messages", which renders PAGE more above. Live
// events only ever touch the end, so they never meet the unrendered part.
//
// Virtualized once rendered: a conversation of more than ALL_UP_TO items keeps in the DOM only the
// KEEP items on either side of the one at the top of the viewport; the others are detached (kept,
// as elements, in `above` and `below`, each with the height it had) and two spacers stand for their
// height, so the scrollbar stays true. Scrolling moves the window; every per-frame cost of the page
// (style, layout, paint, the compositor's cull rects) then depends on a few hundred items, not on the
// length of the session.
//
// Deltas are coalesced: a delta only marks its streaming message, and at most every DELTA_INTERVAL
// ms one flush re-renders each streaming message once (its text nodes get the text so far) and,
// when the reader was at the bottom, scrolls to follow. One repaint per flush instead of one per
// delta is what keeps a streaming page's main thread mostly idle.
//
// A card looks the same live and after a reload: the sync window's blocks carry what the live events
// did (a tool_call block its start-time render, read_only and the permission answer; a tool_result
// block its exit code, duration and render), and window.turns each turn's usage, shown after the
// turn's last message as turn_end showed it live.
import { render, type ComponentChildren, type VNode } from "preact";
import { emptyTranscript, foldTranscript, type Transcript } from "../store/transcript";
import type { Block, Event, LiveWindow, Message, TurnSummary } from "../store/wire";
import { messageBody, streamingBody, ToolCard, usageText, type Mine } from "./Message";

export const FIRST_WINDOW = 100; // messages rendered when a conversation is first synced
export const PAGE = 100; // messages rendered per "show earlier"
const SMALL = 10; // fewer unrendered messages than this are rendered at once: no button for a handful
export const ALL_UP_TO = 400; // a conversation of up to this many items keeps all of them in the DOM
export const KEEP = 100; // beyond it, this many items stay rendered on either side of the viewport
const SLACK = 16; // the window moves once it is this many items off centre (a small batch at a time)
export const DELTA_INTERVAL = 50; // ms between two flushes of streamed text (20 a second)
export const AT_BOTTOM = 80; // px: a reader this close to the end is following the stream

/** What a message's item was last rendered from: it is rendered again only when one of these changed. */
interface Shown {
  message: Message;
  results: (Block | undefined)[];
  marks: string; // which of its calls are running and which have an answer from outside their block
}

function item(className: string, content?: VNode | ComponentChildren): HTMLElement {
  const li = document.createElement("li");
  li.className = className;
  if (content !== undefined) render(<>{content}</>, li);
  return li;
}

export class Conversation {
  el: HTMLElement = Object.assign(document.createElement("ol"), { className: "conversation" });
  transcript: Transcript;
  messages = new Map<string, HTMLElement>(); // message id -> <li> (rendered messages only)
  shown = new WeakMap<HTMLElement, Shown>();
  partials = new Map<string, HTMLElement>(); // message id -> its <li> while it streams
  orphans = new Map<string, [HTMLElement, Block, Block | undefined]>(); // a live tool call in no message: its card's <li>, call, result
  running = new Set<string>(); // tool calls whose tool_call event arrived (started, no result yet)
  answers = new Map<string, Record<string, unknown>>(); // a call's permission answer its block lacks (an older daemon's permission_resolved)
  turns = new Map<string, HTMLElement>(); // turn id -> its usage line
  turnsAfter = new Map<string, TurnSummary[]>(); // message id -> the synced turns it ended (their usage goes after it)
  first = 0; // the window's messages before this index are not rendered (they wait above)
  syncsSeen = 0;
  settledSeen = -1;
  compactionIndex: number | null = null;
  firstId: string | null = null;
  more: HTMLElement;
  onFork: (messageId: string) => void;
  mine: Mine;
  above: HTMLElement[] = []; // items detached above the rendered ones, in order (virtualized)
  below: HTMLElement[] = []; // and below them
  heights = new WeakMap<HTMLElement, number>(); // an item's height (to the next one's top) when last rendered
  topSpacer: HTMLElement = item("spacer");
  bottomSpacer: HTMLElement = item("spacer");
  allUpTo = ALL_UP_TO;
  keep = KEEP;
  slack = SLACK;
  streamed = new Set<string>(); // streaming messages whose text grew since the last flush
  flushTimer: ReturnType<typeof setTimeout> | null = null;
  lastFlush = -Infinity;

  /** `transcript`: the agent's, kept by the store (update() follows it); without one the
   * conversation keeps its own and is fed events (receive(), sync(), delta() …). */
  constructor(onFork: (messageId: string) => void, transcript: Transcript = emptyTranscript()) {
    this.transcript = transcript;
    this.topSpacer.setAttribute("aria-hidden", "true");
    this.bottomSpacer.setAttribute("aria-hidden", "true");
    this.more = item(
      "show-earlier",
      <button type="button" onClick={() => this.showEarlier()}>
        Show earlier messages
      </button>,
    );
    this.el.addEventListener("click", (event) => {
      const fork = (event.target as Element).closest(".fork");
      const id = fork?.closest<HTMLElement>("li[data-id]")?.dataset.id;
      if (id && this.messages.has(id)) this.onFork(id);
    });
    this.el.addEventListener("scroll", () => {
      if (this.first && this.el.scrollTop < 120) this.showEarlier();
      this.virtualize();
    }, { passive: true });
    this.onFork = onFork;
    this.mine = () => false; // whether this page answered (main.ts: its hello.client_ids): "… by you"
  }

  /** The window's messages not rendered yet, oldest first. */
  get earlier(): Message[] {
    return this.transcript.messages.slice(0, this.first);
  }

  // --- fed events (a conversation that keeps its own transcript) --------------------------------

  receive(ev: Event): void {
    foldTranscript(this.transcript, ev);
    if (ev.type === "tool_call") this.started(ev);
    else this.update();
  }

  sync(window: LiveWindow): void {
    this.receive({ type: "sync", live_window: window });
  }

  delta(ev: Event): void {
    this.receive({ ...ev, type: "message_delta" });
  }

  toolCall(ev: Event): void {
    this.receive({ ...ev, type: "tool_call" });
  }

  // --- following the transcript -----------------------------------------------------------------

  /** Brings the items up to the transcript: everything after a sync, else what changed at the end;
   * a change of only streamed text marks its message for the next flush. */
  update(): void {
    const t = this.transcript;
    if (t.settled !== this.settledSeen) {
      this.settledSeen = t.settled;
      const results = resultsOf(t.messages);
      if (t.syncs !== this.syncsSeen) {
        this.syncsSeen = t.syncs;
        this.resync(results);
      } else this.live(results);
      if (this.orphans.size) {
        const held = callsOf(t.messages);
        for (const [id, [li, call, result]] of this.orphans) {
          if (held.has(id)) {
            // its message arrived after all: the card is that message's
            this.orphans.delete(id);
            this.drop(li);
          } else if (results.get(id) !== result) this.orphan(li, call, results.get(id));
        }
      }
    }
    for (const [id, blocks] of t.streaming) {
      if (this.messages.has(id)) continue; // already complete: the snapshot is the truth
      let li = this.partials.get(id);
      if (!li) {
        // the first delta after a pause shows at once; those that follow wait for the next flush
        li = item("message assistant streaming");
        li.dataset.id = id;
        this.partials.set(id, li);
        this.push(li);
        render(streamingBody(blocks, this.mine), li);
        continue;
      }
      this.streamed.add(id);
    }
    if (this.streamed.size) this.flushTimer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + DELTA_INTERVAL - performance.now()));
  }

  /** A tool call's tool_call event: its card shows it running; a call in no message gets a card of its own. */
  started(ev: Event): void {
    this.running.add(ev.tool_call_id);
    if (!callsOf(this.transcript.messages).has(ev.tool_call_id) && !this.orphans.has(ev.tool_call_id)) {
      const li = item("message assistant");
      this.orphans.set(ev.tool_call_id, [li, { type: "tool_call", id: ev.tool_call_id, name: ev.name, args: ev.args, read_only: ev.read_only, render: ev.render }, undefined]);
      this.push(li);
    }
    this.settledSeen = -1; // its card changed: re-render it
    this.update();
    const orphan = this.orphans.get(ev.tool_call_id);
    if (orphan) this.orphan(orphan[0], orphan[1], resultsOf(this.transcript.messages).get(ev.tool_call_id));
  }

  /** How a call's permission request was answered, when its permission_resolved did not name the call. */
  answered(toolCallId: string, answer: Record<string, unknown>): void {
    this.answers.set(toolCallId, answer);
    this.settledSeen = -1;
    this.update();
  }

  orphan(li: HTMLElement, call: Block, result: Block | undefined): void {
    this.orphans.set(call.id || "", [li, call, result]);
    render(<ToolCard call={call} result={result} running={this.running.has(call.id || "")} answer={this.answers.get(call.id || "")} mine={this.mine} />, li);
  }

  /** Re-renders the streaming messages whose text grew since the last flush (one render each) and,
   * when the reader was at the bottom, follows them: one layout and one repaint for every delta in between. */
  flush(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (!this.streamed.size) return;
    this.lastFlush = performance.now();
    const follow = this.el.isConnected && !this.below.length && this.atBottom();
    for (const id of this.streamed) {
      const li = this.partials.get(id);
      const blocks = this.transcript.streaming.get(id);
      if (li && blocks && !this.messages.has(id)) render(streamingBody(blocks, this.mine), li);
    }
    this.streamed.clear();
    if (follow) this.el.scrollTop = this.el.scrollHeight;
  }

  atBottom(): boolean {
    return this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight <= AT_BOTTOM;
  }

  // Live changes: messages replaced in place (a tool call's render or answer, a message completed)
  // re-render; new ones go at the end (a streamed one in its streaming item's place); a new turn's
  // usage goes at the end.
  live(results: Map<string, Block>): void {
    const list = this.transcript.messages;
    for (let i = this.first; i < list.length; i++) {
      const message = list[i];
      if (this.messages.has(message.id)) {
        this.upsert(message, results);
        continue;
      }
      const partial = this.partials.get(message.id);
      this.partials.delete(message.id);
      const li = this.upsert(message, results);
      if (partial) this.replace(partial, li);
      else this.push(li);
    }
    for (const turn of this.transcript.turns) if (!this.turns.has(turn.turn_id)) this.push(this.usageLine(turn));
  }

  // --- whole-window reconcile (sync) ------------------------------------------------------------

  resync(results: Map<string, Block>): void {
    this.restore(); // the reconcile below places elements next to each other: all of them in the DOM
    const t = this.transcript;
    const list = t.messages;
    this.turnsAfter = new Map();
    for (const turn of t.turns) {
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
    // on a first sync, FIRST_WINDOW messages from the end; everything above waits.
    let cut = list.findIndex((m) => this.messages.has(m.id));
    if (cut < 0) cut = Math.max(0, list.length - FIRST_WINDOW);
    if (cut < SMALL) cut = 0;
    this.first = cut;
    if (this.first) this.el.prepend(this.more);
    else this.more.remove();
    // Messages already shown stay where they are (with the usage lines and notes between them);
    // a new one goes right after its predecessor in the window. In-flight messages stay last.
    let previous: HTMLElement | null = null;
    for (let i = cut; i < list.length; i++) {
      const message = list[i];
      const partial = this.partials.get(message.id); // completed while this page was away
      if (partial) {
        partial.remove();
        this.partials.delete(message.id);
      }
      const li = this.upsert(message, results);
      if (li.parentNode !== this.el) {
        if (previous) previous.after(li);
        else if (this.first) this.more.after(li);
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
    this.compactionIndex = t.compactionIndex;
    this.firstId = list.length ? list[0].id : null;
    this.placeMarker();
  }

  placeMarker(): void {
    const first = this.firstId === null ? undefined : this.messages.get(this.firstId);
    if (this.compactionIndex === null || this.first || !first) return;
    const marker = item("compaction-marker from-sync", `Compacted (${this.compactionIndex}): the summary below stands for the earlier messages`);
    const at = this.above.indexOf(first);
    if (at >= 0) this.above.splice(at, 0, marker);
    else first.before(marker);
  }

  // Render up to `count` more of the earlier messages above the rendered ones, keeping what the
  // reader looks at where it is.
  showEarlier(count = PAGE): void {
    if (!this.first) return;
    const from = Math.max(0, this.first - count);
    const batch = this.transcript.messages.slice(from, this.first);
    this.first = from;
    const height = this.el.scrollHeight;
    const top = this.el.scrollTop;
    const results = resultsOf(this.transcript.messages);
    const items: HTMLElement[] = [];
    for (const message of batch) items.push(this.upsert(message, results), ...this.usageAfter(message.id));
    // virtualized and scrolled away from the top: the new rows wait above with the other detached ones
    if (this.above.length) this.detachAbove(items);
    else this.more.after(...items);
    if (!this.first) {
      this.more.remove();
      this.placeMarker();
    }
    this.el.scrollTop = top + (this.el.scrollHeight - height);
  }

  // --- items ------------------------------------------------------------------------------------

  /** The message's item, (re-)rendered when the message or a result of one of its calls changed. */
  upsert(message: Message, results: Map<string, Block>): HTMLElement {
    let li = this.messages.get(message.id);
    if (!li) {
      li = document.createElement("li");
      li.dataset.id = message.id;
      this.messages.set(message.id, li);
    }
    const calls = message.content.filter((b) => b.type === "tool_call").map((b) => b.id || "");
    const marks = calls.map((id) => `${this.running.has(id) ? "r" : ""}${this.answers.has(id) ? "a" : ""}`).join(" ");
    const now: Shown = { message, results: calls.map((id) => results.get(id)), marks };
    const was = this.shown.get(li);
    if (was && was.message === message && was.marks === now.marks && was.results.every((r, i) => r === now.results[i])) return li;
    this.shown.set(li, now);
    const onlyResults = message.role === "user" && message.content.length > 0 && message.content.every((b) => b.type === "tool_result");
    li.className = `message ${message.role}`;
    li.hidden = onlyResults; // tool results show inside their tool call's card
    if (onlyResults) render(null, li);
    else render(messageBody({ message, results, running: this.running, answers: this.answers, mine: this.mine }), li);
    return li;
  }

  // The usage lines of the turns a synced message ended (made once per turn: a line shown live stays)
  usageAfter(messageId: string): HTMLElement[] {
    return (this.turnsAfter.get(messageId) || []).map((turn) => this.turns.get(turn.turn_id) || this.usageLine(turn));
  }

  usageLine(turn: TurnSummary): HTMLElement {
    const li = item("turn-usage", usageText(turn.usage));
    li.dataset.turn = turn.turn_id;
    this.turns.set(turn.turn_id, li);
    return li;
  }

  compaction(ev: Event): void {
    this.push(item("compaction-marker", `Compacted: ${ev.tokens_before} → ${ev.tokens_after} tokens`));
  }

  note(content: ComponentChildren, kind = "note"): void {
    this.push(item(`note note-${kind}`, content));
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

  /** Takes an item out, rendered or detached. */
  drop(item: HTMLElement): void {
    for (const list of [this.above, this.below]) {
      const at = list.indexOf(item);
      if (at >= 0) {
        list.splice(at, 1);
        this.sizeSpacers();
        return;
      }
    }
    item.remove();
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

}

/** Each tool call's result in the window, by call id. */
function resultsOf(messages: Message[]): Map<string, Block> {
  const results = new Map<string, Block>();
  for (const message of messages) {
    if (message.role !== "user") continue;
    for (const b of message.content) if (b.type === "tool_result" && b.tool_call_id) results.set(b.tool_call_id, b);
  }
  return results;
}

/** The ids of the tool calls the window's messages hold. */
function callsOf(messages: Message[]): Set<string> {
  const calls = new Set<string>();
  for (const message of messages) for (const b of message.content) if (b.type === "tool_call" && b.id) calls.add(b.id);
  return calls;
}

function fragment(items: HTMLElement[]): DocumentFragment {
  const rows = document.createDocumentFragment();
  rows.append(...items);
  return rows;
}

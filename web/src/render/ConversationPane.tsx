// The conversation pane: one Conversation (conversation.tsx) per agent, each reading that agent's
// transcript in the store, and the one of the open agent in the page. The open agent's conversation
// follows every change of its transcript; another's catches up when it is shown (nothing of a
// conversation out of view is drawn while its agent streams). What is no state of the store but a
// moment of the conversation — a runtime that exited, an error, an answer to a request that was no
// tool call, a compaction as it happens, a tool call starting — is put in by event().
import type { AgentState } from "../store/agent";
import type { Store } from "../store/store";
import type { Event, Request } from "../store/wire";
import { resolutionText } from "../words.js";
import { AT_BOTTOM, Conversation } from "./conversation";

/** What the page holds of an agent beside its state: its conversation and where the reader was. */
export interface View {
  conversation: Conversation;
  scroll: number | null; // scrollTop to return to when shown again; null: the bottom
}

export interface PaneActions {
  fork(agent: AgentState, messageId: string): void;
  restart(agent: AgentState): void;
}

export class ConversationPane {
  views = new Map<string, View>();
  shown: string | null = null;
  scrollQueued = false;
  /** every request this page has heard of, by id: a resolution is worded from its request */
  asked = new Map<string, Request>();

  constructor(
    private store: Store,
    private actions: PaneActions,
    private slot: () => HTMLElement,
  ) {}

  view(agent: AgentState): View {
    let view = this.views.get(agent.id);
    if (!view) {
      const conversation = new Conversation((messageId: string) => this.actions.fork(agent, messageId), agent.transcript);
      conversation.mine = (answer: { source?: string }) => this.store.state.myIds.has(answer.source || "");
      view = { conversation, scroll: null };
      this.views.set(agent.id, view);
    }
    return view;
  }

  forget(id: string): void {
    this.views.delete(id);
  }

  /** Puts `agent`'s conversation in the page (none: the one shown leaves), where its reader was. */
  show(agent: AgentState | null): void {
    const leaving = this.shown ? this.views.get(this.shown) : undefined;
    if (leaving && this.shown !== agent?.id) {
      const el = leaving.conversation.el;
      leaving.scroll = el.scrollHeight - el.scrollTop - el.clientHeight <= AT_BOTTOM ? null : el.scrollTop;
    }
    this.shown = agent ? agent.id : null;
    if (!agent) return;
    const view = this.view(agent);
    const conversation = view.conversation.el;
    this.slot().replaceWith(Object.assign(conversation, { id: "conversation" }));
    view.conversation.update();
    conversation.scrollTop = view.scroll ?? conversation.scrollHeight; // a re-inserted list starts at its top
  }

  /** Before the store folds `m`: the request a resolution answers (the fold forgets it). */
  before(m: Event): void {
    const asked = m.agent_id && m.request_id ? this.store.agent(m.agent_id)?.requests.get(m.request_id) : undefined;
    if (asked) this.asked.set(asked.request_id, asked);
  }

  /** After the store folded one of `agent`'s events: the open conversation follows it, keeping the
   * newest content in view while the reader is at the bottom. */
  event(agent: AgentState, m: Event): void {
    const view = agent.id === this.shown ? this.views.get(agent.id) : undefined;
    const conv = view?.conversation;
    if (m.type === "message_delta") {
      // streamed text waits for the conversation's next flush, which follows it itself: no layout read here
      conv?.update();
      return;
    }
    // whether the reader is at the bottom, read before anything is added (a scroll is already
    // queued for this frame: nothing to read)
    const atBottom = conv && !this.scrollQueued ? conv.atBottom() : false;
    this.moment(agent, m);
    if (!conv) return;
    conv.update();
    if (atBottom) this.followBottom(conv.el);
  }

  // What an event puts in the conversation that the transcript does not hold.
  private moment(agent: AgentState, m: Event): void {
    const note = (content: preact.ComponentChildren, kind: string) => {
      const conv = this.view(agent).conversation;
      conv.update(); // after everything before it
      conv.note(content, kind);
    };
    switch (m.type) {
      case "tool_call":
        return this.views.get(agent.id)?.conversation.started(m);
      case "compaction":
        return this.view(agent).conversation.compaction(m);
      case "agent_exited":
        return note(`The runtime exited: ${m.reason}`, "error");
      case "error":
        // The runtime cannot go on (PROTOCOL §9.4): say so, and offer the one recovery there is —
        // a fresh runtime on the same durable session (the daemon restores it on attach).
        if (!m.fatal) return note(`${m.code}: ${m.message}`, "error");
        return note(
          <>
            {`${m.code}: ${m.message} — the agent stopped. `}
            <button type="button" class="recover" onClick={() => this.actions.restart(agent)}>
              Restart the agent
            </button>
          </>,
          "fatal",
        );
      case "permission_resolved":
      case "ui_resolved": {
        const req = this.asked.get(m.request_id);
        // a tool call's answer shows on its card (the transcript holds it); any other as a note
        const call = m.type === "permission_resolved" && (m.tool_call_id || (req && req.tool_call_id));
        if (call && !m.tool_call_id) this.view(agent).conversation.answered(call, m);
        else if (!call && req) note(`${req.tool_name || req.title || req.kind}: ${resolutionText(m, req, this.store.state.myIds.has(m.source))}`, "resolved");
        return;
      }
    }
  }

  // One layout read and one scroll per frame, however many events arrive in it.
  private followBottom(el: HTMLElement): void {
    if (this.scrollQueued) return;
    this.scrollQueued = true;
    const from = el.scrollTop;
    requestAnimationFrame(() => {
      this.scrollQueued = false;
      // the reader scrolled up since this was queued: their place holds
      if (el.scrollTop >= from - 1) el.scrollTop = el.scrollHeight;
    });
  }
}

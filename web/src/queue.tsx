// What waits above the prompt box (the additive queue_changed / sync.queue / unqueue), as a Preact
// component on the store: each queued message of the open agent with its behaviour (Steer, After
// this turn), an Edit that takes it back into the box and a × that withdraws it; and each message
// the agent handed back instead of delivering it (an abort, a failed turn, a runtime gone), "Not
// sent", with Put back. A hand-back goes straight into the box when the box is empty; text the
// person is typing is never overwritten — Put back appends.
import { useEffect, useState } from "preact/hooks";
import type { AgentState } from "./store/agent";
import type { Store } from "./store/store";
import type { QueuedMessage } from "./store/wire";

const BEHAVIOUR: Record<string, string> = { steer: "Steer", follow_up: "After this turn" };
const WHY: Record<string, string> = {
  aborted: "the turn was aborted",
  turn_failed: "the turn failed before it",
  agent_failed: "the agent stopped on an error",
  runtime_exited: "the agent's runtime exited",
};

type Returned = QueuedMessage & { reason?: string };

/** What the queue needs of the page: the socket, the box, toasts and names. */
export interface QueueHost {
  store: Store;
  conn: { request(message: Record<string, unknown>): Promise<{ success: boolean; data?: any; error?: { code: string; message: string } }> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  toast(text: string, kind?: string): void;
  label(agent: AgentState): string;
  selected: string | null;
}

export interface Box {
  isEmpty(): boolean;
  restore(item: QueuedMessage): void;
}

export function Queue({ host, box }: { host: QueueHost; box: Box }) {
  const [, redraw] = useState(0);
  useEffect(() => host.store.subscribe(() => redraw((n) => n + 1)), [host.store]);
  const agent = host.store.agent(host.store.state.selected);
  const queue = agent ? agent.queue : [];
  const returned: Returned[] = agent ? agent.returned : [];
  return (
    <ul id="queue" class="queue" aria-label="Queued messages" aria-live="polite" hidden={queue.length + returned.length === 0}>
      {agent ? <Rows host={host} box={box} agent={agent} queue={queue} returned={returned} /> : null}
    </ul>
  );
}

function Rows({ host, box, agent, queue, returned }: { host: QueueHost; box: Box; agent: AgentState; queue: QueuedMessage[]; returned: Returned[] }) {
  const canWithdraw = (agent.capabilities || []).includes("message-queue");
  const withdraw = (q: QueuedMessage, edit: boolean) => withdrawQueued(host, box, agent, q, edit);
  const putBack = (back: Returned) => {
    box.restore(back);
    host.store.dismissReturned(agent.id, back);
    host.store.flush();
  };
  const dismiss = (back: Returned) => {
    host.store.dismissReturned(agent.id, back);
    host.store.flush();
  };
  return (
    <>
      {queue.map((q) => (
        <li key={q.queue_id} class={`queued behaviour-${q.behavior}`} data-queue-id={q.queue_id}>
          <span class="badge">{BEHAVIOUR[q.behavior] || q.behavior}</span>
          <span class="queued-text">{q.message}</span>
          {q.images?.length ? <span class="queued-meta">{`+${q.images.length} image${q.images.length > 1 ? "s" : ""}`}</span> : null}
          {canWithdraw ? (
            <button type="button" class="queued-edit" aria-label={`Edit queued message: ${q.message}`} onClick={() => withdraw(q, true)}>
              Edit
            </button>
          ) : null}
          {canWithdraw ? (
            <button type="button" class="queued-withdraw" aria-label={`Withdraw queued message: ${q.message}`} title="Withdraw" onClick={() => withdraw(q, false)}>
              ×
            </button>
          ) : null}
        </li>
      ))}
      {returned.map((back, i) => (
        <li key={`${back.queue_id}-${i}`} class="returned" data-queue-id={back.queue_id} role="status">
          <span class="badge attention">Not sent</span>
          <span class="queued-text">{back.message}</span>
          <span class="queued-meta">{WHY[back.reason || ""] || back.reason}</span>
          <button type="button" class="put-back" onClick={() => putBack(back)}>
            Put back
          </button>
          <button type="button" aria-label={`Dismiss: ${back.message}`} title="Dismiss" onClick={() => dismiss(back)}>
            ×
          </button>
        </li>
      ))}
    </>
  );
}

async function withdrawQueued(host: QueueHost, box: Box, agent: AgentState, queued: QueuedMessage, edit: boolean): Promise<void> {
  let reply;
  try {
    reply = await host.conn.request({ type: "unqueue", agent_id: agent.id, queue_id: queued.queue_id });
  } catch (err) {
    host.toast(`withdraw: ${(err as Error).message}`, "error");
    return;
  }
  if (!reply.success) {
    // delivery wins: a message delivered meanwhile cannot be taken back
    host.toast(reply.error?.code === "NOT_FOUND" ? "Too late: the message was delivered already" : `withdraw: ${reply.error?.message}`, "error");
    return;
  }
  if (edit) box.restore(reply.data.withdrawn);
}

/** Messages handed back (queue_changed.returned): into the box, or to the store's "Not sent" rows. */
export class QueueView {
  constructor(
    private host: QueueHost,
    private box: Box,
  ) {}

  // queue_changed with `returned` for `agent`: into the box when it is empty and shows this agent,
  // else a "Not sent" row to put back later.
  handBack(agent: AgentState, items: QueuedMessage[], reason: string): void {
    const selected = this.host.selected === agent.id;
    const intoBox = selected && this.box.isEmpty(); // checked once: all of them, or none
    if (intoBox) for (const item of items) this.box.restore(item);
    else this.host.store.handBack(agent.id, items, reason);
    this.host.store.flush();
    const what = items.length === 1 ? "A queued message was" : `${items.length} queued messages were`;
    this.host.toast(`${this.host.label(agent)}: ${what} not sent (${WHY[reason] || reason}); ${intoBox ? "its text is back in the message box" : "Put back offers it again"}`, "info");
  }
}

// What waits above the prompt box (the additive queue_changed / sync.queue / unqueue): each queued
// message with its behaviour (Steer, After this turn), an Edit that takes it back into the box and a
// × that withdraws it; and each message the agent handed back instead of delivering it (an abort, a
// failed turn, a runtime gone), "Not sent", with Put back. A hand-back goes straight into the box
// when the box is empty; text the person is typing is never overwritten — Put back appends.
import { h } from "./dom.js";

const BEHAVIOUR = { steer: "Steer", follow_up: "After this turn" };
const WHY = {
  aborted: "the turn was aborted",
  turn_failed: "the turn failed before it",
  agent_failed: "the agent stopped on an error",
  runtime_exited: "the agent's runtime exited",
};

export class QueueView {
  constructor(app, composer) {
    this.app = app;
    this.composer = composer;
    this.el = document.getElementById("queue");
    this.shown = null; // [agent, queue, returned] last rendered: the same arrays → no DOM work
  }

  // The selected agent's queue and hand-backs, rebuilt only when one of them changed.
  render(agent) {
    if (this.shown && this.shown[0] === agent && this.shown[1] === agent.queue && this.shown[2] === agent.returned) return;
    this.shown = [agent, agent.queue, agent.returned]; // both are replaced, never changed in place
    const canWithdraw = (agent.capabilities || []).includes("message-queue");
    const rows = agent.queue.map((q) =>
      h(
        "li",
        { class: `queued behaviour-${q.behavior}`, dataset: { queueId: q.queue_id } },
        h("span", { class: "badge" }, BEHAVIOUR[q.behavior] || q.behavior),
        h("span", { class: "queued-text" }, q.message),
        q.images?.length ? h("span", { class: "queued-meta" }, `+${q.images.length} image${q.images.length > 1 ? "s" : ""}`) : null,
        canWithdraw && h("button", { type: "button", class: "queued-edit", "aria-label": `Edit queued message: ${q.message}`, onclick: () => this.withdraw(agent, q, true) }, "Edit"),
        canWithdraw && h("button", { type: "button", class: "queued-withdraw", "aria-label": `Withdraw queued message: ${q.message}`, title: "Withdraw", onclick: () => this.withdraw(agent, q, false) }, "×"),
      ),
    );
    for (const back of agent.returned) {
      rows.push(
        h(
          "li",
          { class: "returned", dataset: { queueId: back.queue_id }, role: "status" },
          h("span", { class: "badge attention" }, "Not sent"),
          h("span", { class: "queued-text" }, back.message),
          h("span", { class: "queued-meta" }, WHY[back.reason] || back.reason),
          h("button", { type: "button", class: "put-back", onclick: () => this.putBack(agent, back) }, "Put back"),
          h("button", { type: "button", "aria-label": `Dismiss: ${back.message}`, title: "Dismiss", onclick: () => this.dismiss(agent, back) }, "×"),
        ),
      );
    }
    this.el.replaceChildren(...rows);
    this.el.hidden = rows.length === 0;
  }

  // queue_changed with `returned` for `agent`: into the box when it is empty and shows this agent,
  // else a "Not sent" row to put back later.
  handBack(agent, items, reason) {
    const selected = this.app.selected === agent.id;
    const intoBox = selected && this.composer.isEmpty(); // checked once: all of them, or none
    if (intoBox) for (const item of items) this.composer.restore(item);
    else this.app.store.handBack(agent.id, items, reason);
    const what = items.length === 1 ? "A queued message was" : `${items.length} queued messages were`;
    this.app.toast(`${this.app.label(agent)}: ${what} not sent (${WHY[reason] || reason}); ${intoBox ? "its text is back in the message box" : "Put back offers it again"}`, "info");
    if (selected) this.render(agent);
  }

  async withdraw(agent, queued, edit) {
    let reply;
    try {
      reply = await this.app.conn.request({ type: "unqueue", agent_id: agent.id, queue_id: queued.queue_id });
    } catch (err) {
      this.app.toast(`withdraw: ${err.message}`, "error");
      return;
    }
    if (!reply.success) {
      // delivery wins: a message delivered meanwhile cannot be taken back
      this.app.toast(reply.error.code === "NOT_FOUND" ? "Too late: the message was delivered already" : `withdraw: ${reply.error.message}`, "error");
      return;
    }
    if (edit) this.composer.restore(reply.data.withdrawn);
  }

  putBack(agent, back) {
    this.composer.restore(back);
    this.dismiss(agent, back);
  }

  dismiss(agent, back) {
    this.app.store.dismissReturned(agent.id, back);
    this.render(agent);
  }
}

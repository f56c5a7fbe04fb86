// The prompt box (PROTOCOL §9.2): Send while the agent is idle; Steer, Follow up and Abort while a
// turn runs; above it what is queued (queue.js). Pasted images travel as base64 Image blocks and
// preview from blob: URLs.
import { h } from "./dom.js";
import { QueueView } from "./queue.js";
import { isBusy } from "./store/agent";

export class Composer {
  constructor(app) {
    this.app = app;
    this.text = document.getElementById("prompt-text");
    this.images = [];
    this.form = document.getElementById("prompt");
    this.queue = new QueueView(app, this);
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit(this.agent && isBusy(this.agent) ? "follow_up" : null);
    });
    document.getElementById("steer").addEventListener("click", () => this.submit("steer"));
    document.getElementById("follow-up").addEventListener("click", () => this.submit("follow_up"));
    document.getElementById("abort").addEventListener("click", () => this.abort());
    this.text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.text.addEventListener("paste", (e) => this.paste(e));
  }

  update(agent) {
    this.agent = agent;
    const busy = isBusy(agent);
    document.getElementById("send").hidden = busy;
    document.getElementById("steer").hidden = !busy;
    document.getElementById("follow-up").hidden = !busy;
    document.getElementById("abort").hidden = !busy;
    this.queue.render(agent);
  }

  isEmpty() {
    return !this.text.value.trim() && !this.images.length;
  }

  // A message taken back (withdrawn to edit, or handed back): its text after what is in the box,
  // never in place of it, and its images beside the box's.
  restore(item) {
    const typed = this.text.value.replace(/\s+$/, "");
    this.text.value = typed ? `${typed}\n\n${item.message}` : item.message;
    for (const image of item.images || []) this.addImage(image, new Blob([Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0))], { type: image.mime_type }));
  }

  async submit(behavior) {
    const agent = this.agent;
    const message = this.text.value.trim();
    if (!agent || (!message && !this.images.length)) return;
    const command = { type: behavior === "steer" ? "steer" : "prompt", agent_id: agent.id, message };
    if (behavior === "follow_up") command.streaming_behavior = "follow_up";
    if (this.images.length) command.images = this.images.map(({ image }) => image);
    try {
      const reply = await this.app.conn.request(command);
      if (!reply.success) {
        this.app.toast(`${command.type}: ${reply.error.message}`, "error");
        return;
      }
    } catch (err) {
      this.app.toast(`not sent: ${err.message}`, "error");
      return;
    }
    this.text.value = "";
    this.clearImages();
  }

  async abort() {
    if (!this.agent) return;
    try {
      await this.app.conn.request({ type: "abort", agent_id: this.agent.id });
    } catch (err) {
      this.app.toast(`abort: ${err.message}`, "error");
    }
  }

  paste(event) {
    const files = [...(event.clipboardData?.files || [])].filter((f) => f.type.startsWith("image/"));
    if (!files.length) return;
    event.preventDefault();
    for (const file of files) {
      const reader = new FileReader();
      reader.onload = () => this.addImage({ type: "image", data: String(reader.result).split(",", 2)[1], mime_type: file.type }, file);
      reader.readAsDataURL(file);
    }
  }

  addImage(image, blob) {
    const url = URL.createObjectURL(blob);
    const entry = { image, url };
    entry.el = h("figure", { class: "attachment" }, h("img", { src: url, alt: "pasted image" }), h("button", { type: "button", "aria-label": "Remove image", onclick: () => this.removeImage(entry) }, "×"));
    this.images.push(entry);
    document.getElementById("attachments").append(entry.el);
  }

  removeImage(entry) {
    URL.revokeObjectURL(entry.url);
    entry.el.remove();
    this.images = this.images.filter((e) => e !== entry);
  }

  clearImages() {
    for (const entry of [...this.images]) this.removeImage(entry);
  }
}

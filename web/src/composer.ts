// The prompt box (PROTOCOL §9.2): Send while the agent is idle; Steer, Follow up and Abort while a
// turn runs; above it what is queued (queue.js). Pasted images travel as base64 Image blocks and
// preview from blob: URLs.
import { h } from "./dom.js";
import { QueueView } from "./queue";
import { isBusy, type AgentState } from "./store/agent";
import type { App } from "./main";
import type { QueuedMessage } from "./store/wire";

type Image = { type: string; data: string; mime_type: string };
type Attachment = { image: Image; url: string; el?: HTMLElement };
const $ = (id: string) => document.getElementById(id) as HTMLElement;

export class Composer {
  app: App;
  text: HTMLTextAreaElement;
  images: Attachment[] = [];
  form: HTMLFormElement;
  queue: QueueView;
  agent: AgentState | null = null;
  hints: HTMLElement | null;
  back: number;
  typed: string;

  constructor(app: App) {
    this.app = app;
    this.text = $("prompt-text") as HTMLTextAreaElement;
    this.form = $("prompt") as HTMLFormElement;
    this.queue = new QueueView(app, this);
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit(this.agent && isBusy(this.agent) ? "follow_up" : null);
    });
    $("steer").addEventListener("click", () => this.submit("steer"));
    $("follow-up").addEventListener("click", () => this.submit("follow_up"));
    $("abort").addEventListener("click", () => this.abort());
    this.text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.form.requestSubmit();
      } else if ((e.key === "ArrowUp" || e.key === "ArrowDown") && !e.shiftKey && !e.altKey && this.recall(e.key === "ArrowUp" ? 1 : -1)) {
        e.preventDefault();
      }
    });
    this.text.addEventListener("input", () => {
      this.back = 0; // typing leaves the history
      this.hint();
    });
    this.text.addEventListener("paste", (e) => this.paste(e));
    // an image dropped on the box travels like a pasted one
    this.form.addEventListener("dragover", (e) => {
      if ([...(e.dataTransfer?.items || [])].some((i) => i.type.startsWith("image/"))) e.preventDefault();
    });
    this.form.addEventListener("drop", (e) => {
      const files = [...(e.dataTransfer?.files || [])].filter((f) => f.type.startsWith("image/"));
      if (!files.length) return;
      e.preventDefault();
      this.addFiles(files);
    });
    this.hints = document.getElementById("slash-hints");
    this.back = 0; // how far back in the agent's own messages ArrowUp went (0: the box as typed)
    this.typed = "";
  }

  update(agent: AgentState): void {
    this.agent = agent;
    const busy = isBusy(agent);
    $("send").hidden = busy;
    $("steer").hidden = !busy;
    $("follow-up").hidden = !busy;
    $("abort").hidden = !busy;
    this.queue.render();
  }

  isEmpty(): boolean {
    return !this.text.value.trim() && !this.images.length;
  }

  // A message taken back (withdrawn to edit, or handed back): its text after what is in the box,
  // never in place of it, and its images beside the box's.
  restore(item: QueuedMessage): void {
    const typed = this.text.value.replace(/\s+$/, "");
    this.text.value = typed ? `${typed}\n\n${item.message}` : item.message;
    for (const image of item.images || []) this.addImage(image, new Blob([Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0))], { type: image.mime_type }));
  }

  // ArrowUp in an empty box (or at its start while recalling) brings back this agent's earlier
  // messages, newest first; ArrowDown goes forward again, to what was typed.
  recall(step: number): boolean {
    const agent = this.agent;
    if (!agent) return false;
    const caretAtStart = this.text.selectionStart === 0 && this.text.selectionEnd === 0;
    if (this.back === 0 && (this.text.value !== "" || step < 0)) return false;
    if (this.back > 0 && !caretAtStart && step > 0) return false;
    const mine = agent.transcript.messages.filter((m) => m.role === "user").map((m) => m.content.filter((b) => b.type === "text").map((b) => b.text || "").join("")).filter(Boolean);
    const next = this.back + step;
    if (next < 0 || next > mine.length) return false;
    if (this.back === 0) this.typed = this.text.value;
    this.back = next;
    this.text.value = next === 0 ? this.typed : mine[mine.length - next];
    this.text.setSelectionRange(0, 0);
    return true;
  }

  // Under the box while it starts with "/": the commands that match.
  hint(): void {
    if (!this.hints) return;
    const typed = this.text.value;
    const shown = typed.startsWith("/") && !typed.includes("\n") ? SLASH.filter(([name]) => name.startsWith(typed.split(" ")[0])) : [];
    this.hints.replaceChildren(...shown.map(([name, args, what]) => h("li", {}, h("code", {}, `${name}${args ? " " + args : ""}`), ` ${what}`)));
    this.hints.hidden = shown.length === 0;
  }

  // "/compact", "/fork", "/model ID", "/mode NAME", "/abort": the protocol's operations, typed.
  async slash(line: string): Promise<boolean> {
    const [name, ...rest] = line.trim().split(/\s+/);
    const arg = rest.join(" ");
    const agent = this.agent!;
    const app = this.app;
    const set = async (type: string, fields: Record<string, unknown>) => {
      const reply = await app.conn.request({ type, agent_id: agent.id, ...fields });
      if (!reply.success) app.toast(`${name}: ${reply.error.message}`, "error");
    };
    switch (name) {
      case "/compact":
        await app.compact();
        return true;
      case "/abort":
        await this.abort();
        return true;
      case "/fork": {
        const last = agent.transcript.messages[agent.transcript.messages.length - 1];
        if (!last) app.toast("/fork: nothing to fork from yet", "error");
        else await app.sessions.fork(agent, last.id);
        return true;
      }
      case "/model":
      case "/mode":
        if (!arg) {
          app.toast(`${name} needs a name: ${name} ${name === "/model" ? "provider/model" : "build"}`, "error");
          return false;
        }
        await set(name === "/model" ? "set_model" : "set_mode", name === "/model" ? { model: arg } : { mode: arg });
        return true;
      default:
        app.toast(`Unknown command ${name}: ${SLASH.map(([n]) => n).join(", ")}`, "error");
        return false;
    }
  }

  async submit(behavior: "steer" | "follow_up" | null): Promise<void> {
    const agent = this.agent;
    const message = this.text.value.trim();
    if (!agent || (!message && !this.images.length)) return;
    if (message.startsWith("/") && !this.images.length && SLASH.some(([name]) => message.split(/\s/)[0] === name)) {
      if (await this.slash(message)) {
        this.text.value = "";
        this.hint();
      }
      return;
    }
    const command: Record<string, unknown> & { type: string } = { type: behavior === "steer" ? "steer" : "prompt", agent_id: agent.id, message };
    if (behavior === "follow_up") command.streaming_behavior = "follow_up";
    if (this.images.length) command.images = this.images.map(({ image }) => image);
    try {
      const reply = await this.app.conn.request(command);
      if (!reply.success) {
        this.app.toast(`${command.type}: ${reply.error.message}`, "error");
        return;
      }
    } catch (err) {
      this.app.toast(`not sent: ${(err as Error).message}`, "error");
      return;
    }
    this.text.value = "";
    this.back = 0;
    this.hint();
    this.clearImages();
  }

  async abort(): Promise<void> {
    if (!this.agent) return;
    try {
      await this.app.conn.request({ type: "abort", agent_id: this.agent.id });
    } catch (err) {
      this.app.toast(`abort: ${(err as Error).message}`, "error");
    }
  }

  paste(event: ClipboardEvent): void {
    const files = [...(event.clipboardData?.files || [])].filter((f) => f.type.startsWith("image/"));
    if (!files.length) return;
    event.preventDefault();
    this.addFiles(files);
  }

  addFiles(files: File[]): void {
    for (const file of files) {
      const reader = new FileReader();
      reader.onload = () => this.addImage({ type: "image", data: String(reader.result).split(",", 2)[1], mime_type: file.type }, file);
      reader.readAsDataURL(file);
    }
  }

  addImage(image: Image, blob: Blob): void {
    const url = URL.createObjectURL(blob);
    const entry: Attachment = { image, url };
    entry.el = h("figure", { class: "attachment" }, h("img", { src: url, alt: "pasted image" }), h("button", { type: "button", "aria-label": "Remove image", onclick: () => this.removeImage(entry) }, "×"));
    this.images.push(entry);
    $("attachments").append(entry.el);
  }

  removeImage(entry: Attachment): void {
    URL.revokeObjectURL(entry.url);
    entry.el?.remove();
    this.images = this.images.filter((e) => e !== entry);
  }

  clearImages(): void {
    for (const entry of [...this.images]) this.removeImage(entry);
  }
}

// The slash commands: name, argument, what it does.
const SLASH: [string, string, string][] = [
  ["/compact", "", "compact the conversation now"],
  ["/fork", "", "fork a new session from the last message"],
  ["/model", "ID", "switch the model (from the catalog)"],
  ["/mode", "NAME", "switch the mode"],
  ["/abort", "", "stop the running turn"],
];

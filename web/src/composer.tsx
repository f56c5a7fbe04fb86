// The prompt box (PROTOCOL §9.2) as a Preact component on the store: Send while the open agent is
// idle; Steer, Follow up and Abort while a turn runs; above it what is queued (queue.tsx); under it
// the slash commands that match. Pasted or dropped images travel as base64 Image blocks and preview
// from blob: URLs. What is typed is the Composer's (one box for every agent, as before): a message
// taken back or handed back is added after it, never in place of it, the box is cleared only once
// the daemon took the message, and its text outlives a reload of the tab (sessionStorage; the
// images do not).
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { DRAFT, store, stored } from "./page_storage";
import { isSlashCommand, recall, SLASH, slashHints, type Recall } from "./prompt_box";
import { Queue, QueueView, type Box, type QueueHost } from "./queue";
import { isBusy, type AgentState } from "./store/agent";
import type { QueuedMessage } from "./store/wire";

type Image = { type: string; data: string; mime_type: string };
type Attachment = { image: Image; url: string };

/** What the box needs of the page besides the store: the socket, toasts, and two operations. */
export interface ComposerHost extends QueueHost {
  compact(): Promise<void>;
  fork(agent: AgentState, messageId: string): Promise<void> | void;
}

export class Composer implements Box {
  text = "";
  images: Attachment[] = [];
  at: Recall = { back: 0, typed: "" }; // how far back in the agent's own messages ArrowUp went
  queue: QueueView;
  textarea: HTMLTextAreaElement | null = null;
  private listeners = new Set<() => void>();

  constructor(
    private host: ComposerHost,
    el: HTMLElement,
  ) {
    this.text = stored(DRAFT) || "";
    this.queue = new QueueView(host, this);
    render(<ComposerForm composer={this} host={host} />, el);
  }

  get agent(): AgentState | undefined {
    return this.host.store.agent(this.host.store.state.selected);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    store(DRAFT, this.text || null);
    for (const listener of this.listeners) listener();
  }

  setText(value: string): void {
    this.text = value;
    if (this.textarea) this.textarea.value = value; // now, so a caret can be placed in it
    this.changed();
  }

  typed(value: string): void {
    this.text = value;
    this.at = { back: 0, typed: "" }; // typing leaves the history
    this.changed();
  }

  isEmpty(): boolean {
    return !this.text.trim() && !this.images.length;
  }

  // A message taken back (withdrawn to edit, or handed back): its text after what is in the box,
  // never in place of it, and its images beside the box's.
  restore(item: QueuedMessage): void {
    const typed = this.text.replace(/\s+$/, "");
    this.setText(typed ? `${typed}\n\n${item.message}` : item.message);
    for (const image of item.images || []) this.addImage(image, new Blob([Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0))], { type: image.mime_type }));
  }

  /** ArrowUp / ArrowDown through the open agent's own messages; false when the key is the textarea's. */
  recall(step: number): boolean {
    const agent = this.agent;
    const box = this.textarea;
    if (!agent || !box) return false;
    const mine = agent.transcript.messages
      .filter((m) => m.role === "user")
      .map((m) => m.content.filter((b) => b.type === "text").map((b) => b.text || "").join(""))
      .filter(Boolean);
    const moved = recall(this.at, step, box.value, box.selectionStart === 0 && box.selectionEnd === 0, mine);
    if (!moved) return false;
    this.at = moved.at;
    this.setText(moved.value);
    box.setSelectionRange(0, 0);
    return true;
  }

  // "/compact", "/fork", "/model ID", "/mode NAME", "/abort": the protocol's operations, typed.
  async slash(line: string, agent: AgentState): Promise<boolean> {
    const [name, ...rest] = line.trim().split(/\s+/);
    const arg = rest.join(" ");
    const host = this.host;
    switch (name) {
      case "/compact":
        await host.compact();
        return true;
      case "/abort":
        await this.abort();
        return true;
      case "/fork": {
        const last = agent.transcript.messages[agent.transcript.messages.length - 1];
        if (!last) host.toast("/fork: nothing to fork from yet", "error");
        else await host.fork(agent, last.id);
        return true;
      }
      case "/model":
      case "/mode": {
        if (!arg) {
          host.toast(`${name} needs a name: ${name} ${name === "/model" ? "provider/model" : "build"}`, "error");
          return false;
        }
        const command = name === "/model" ? { type: "set_model", model: arg } : { type: "set_mode", mode: arg };
        const reply = await host.conn.request({ ...command, agent_id: agent.id });
        if (!reply.success) host.toast(`${name}: ${reply.error?.message}`, "error");
        return true;
      }
      default:
        host.toast(`Unknown command ${name}: ${SLASH.map(([n]) => n).join(", ")}`, "error");
        return false;
    }
  }

  async submit(behavior: "steer" | "follow_up" | null): Promise<void> {
    const agent = this.agent;
    const message = this.text.trim();
    if (!agent || (!message && !this.images.length)) return;
    if (!this.images.length && isSlashCommand(message)) {
      if (await this.slash(message, agent)) this.setText("");
      return;
    }
    const command: Record<string, unknown> & { type: string } = { type: behavior === "steer" ? "steer" : "prompt", agent_id: agent.id, message };
    if (behavior === "follow_up") command.streaming_behavior = "follow_up";
    if (this.images.length) command.images = this.images.map(({ image }) => image);
    try {
      const reply = await this.host.conn.request(command);
      if (!reply.success) {
        this.host.toast(`${command.type}: ${reply.error?.message}`, "error");
        return;
      }
    } catch (err) {
      this.host.toast(`not sent: ${(err as Error).message}`, "error");
      return;
    }
    this.at = { back: 0, typed: "" };
    this.setText("");
    this.clearImages();
  }

  async abort(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      await this.host.conn.request({ type: "abort", agent_id: agent.id });
    } catch (err) {
      this.host.toast(`abort: ${(err as Error).message}`, "error");
    }
  }

  addFiles(files: File[]): void {
    for (const file of files) {
      const reader = new FileReader();
      reader.onload = () => this.addImage({ type: "image", data: String(reader.result).split(",", 2)[1], mime_type: file.type }, file);
      reader.readAsDataURL(file);
    }
  }

  addImage(image: Image, blob: Blob): void {
    this.images = [...this.images, { image, url: URL.createObjectURL(blob) }];
    this.changed();
  }

  removeImage(entry: Attachment): void {
    URL.revokeObjectURL(entry.url);
    this.images = this.images.filter((e) => e !== entry);
    this.changed();
  }

  clearImages(): void {
    for (const entry of this.images) URL.revokeObjectURL(entry.url);
    this.images = [];
    this.changed();
  }
}

const images = (list: DataTransferItemList | FileList | undefined) => [...(list || [])].filter((f) => f.type.startsWith("image/"));

function ComposerForm({ composer, host }: { composer: Composer; host: ComposerHost }) {
  const [, redraw] = useState(0);
  const busyNow = () => {
    const agent = composer.agent;
    return !!agent && isBusy(agent);
  };
  const busy = busyNow();
  const shown = useRef(busy);
  shown.current = busy;
  useEffect(() => composer.subscribe(() => redraw((n) => n + 1)), [composer]);
  // the store: only whether the open agent is busy (which buttons show) is drawn from it here
  useEffect(() => host.store.subscribe(() => busyNow() !== shown.current && redraw((n) => n + 1)), [host.store]);
  const form = useRef<HTMLFormElement>(null);
  const hints = slashHints(composer.text);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.current?.requestSubmit();
    } else if ((e.key === "ArrowUp" || e.key === "ArrowDown") && !e.shiftKey && !e.altKey && composer.recall(e.key === "ArrowUp" ? 1 : -1)) {
      e.preventDefault();
    }
  };
  // a pasted image, or one dropped on the box, is attached (not inserted as text)
  const attach = (e: Event, list: FileList | undefined) => {
    const files = images(list) as File[];
    if (!files.length) return;
    e.preventDefault();
    composer.addFiles(files);
  };
  const onPaste = (e: ClipboardEvent) => attach(e, e.clipboardData?.files);
  const onDragOver = (e: DragEvent) => {
    if (images(e.dataTransfer?.items).length) e.preventDefault();
  };
  const onDrop = (e: DragEvent) => attach(e, e.dataTransfer?.files);
  const onSubmit = (e: Event) => {
    e.preventDefault();
    void composer.submit(busyNow() ? "follow_up" : null);
  };
  return (
    <form ref={form} id="prompt" class="prompt" onSubmit={onSubmit} onDragOver={onDragOver} onDrop={onDrop}>
      <Queue host={host} box={composer} />
      <label for="prompt-text" class="sr-only">
        Message
      </label>
      <textarea
        ref={(el) => {
          composer.textarea = el;
        }}
        id="prompt-text"
        rows={3}
        aria-describedby="slash-hints"
        placeholder="Message (Enter sends, Shift+Enter for a new line, / for commands, ↑ for earlier messages, paste or drop images)"
        value={composer.text}
        onInput={(e) => composer.typed((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
      />
      <ul id="slash-hints" class="slash-hints" aria-live="polite" hidden={hints.length === 0}>
        {hints.map(([name, args, what]) => (
          <li key={name}>
            <code>{`${name}${args ? " " + args : ""}`}</code>
            {` ${what}`}
          </li>
        ))}
      </ul>
      <div id="attachments" class="attachments">
        {composer.images.map((entry) => (
          <figure key={entry.url} class="attachment">
            <img src={entry.url} alt="pasted image" />
            <button type="button" aria-label="Remove image" onClick={() => composer.removeImage(entry)}>
              ×
            </button>
          </figure>
        ))}
      </div>
      <div class="prompt-buttons">
        <button type="submit" id="send" hidden={busy}>
          Send
        </button>
        <button type="button" id="steer" hidden={!busy} onClick={() => void composer.submit("steer")}>
          Steer
        </button>
        <button type="button" id="follow-up" hidden={!busy} onClick={() => void composer.submit("follow_up")}>
          Follow up
        </button>
        <button type="button" id="abort" class="danger" hidden={!busy} onClick={() => void composer.abort()}>
          Abort
        </button>
      </div>
    </form>
  );
}

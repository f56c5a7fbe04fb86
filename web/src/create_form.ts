// The new-agent form beyond Model and Mode: the folder completed as it is typed (recent folders,
// then the daemon's fs.complete when it offers it), the sandbox, and "new workspace" — which makes
// the agent with workspace.create in a fresh git worktree (store/create.ts builds the command).
import { h } from "./dom.js";
import { completable, suggestions } from "./store/folders";
import type { Store } from "./store/store";

type Request = (message: Record<string, unknown>) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const $ = (id: string) => document.getElementById(id) as HTMLElement;

export class CreateForm {
  private asked = 0; // the newest completion asked; older answers are dropped
  private timer: ReturnType<typeof setTimeout> | null = null;
  recent: string[] = [];
  private host: HTMLSelectElement;

  constructor(
    private store: Store,
    private request: Request,
  ) {
    const form = $("create") as HTMLFormElement;
    const cwd = form.elements.namedItem("cwd") as HTMLInputElement;
    const workspace = form.elements.namedItem("workspace") as HTMLInputElement;
    const sandbox = form.elements.namedItem("sandbox") as HTMLSelectElement;
    this.host = form.elements.namedItem("host") as HTMLSelectElement;
    cwd.addEventListener("input", () => this.typed(cwd.value));
    cwd.addEventListener("focus", () => this.typed(cwd.value));
    // workspace.create takes no sandbox: the choice is greyed out, its title saying why
    workspace.addEventListener("change", () => {
      sandbox.disabled = workspace.checked;
      sandbox.title = workspace.checked ? "A new workspace's agent starts with the configured sandbox" : "How its bash commands are confined";
    });
  }

  /** The folders the page knows, newest first (main.ts keeps them). */
  setRecent(folders: string[]): void {
    this.recent = folders;
    this.fill(suggestions("", folders, []));
  }

  /** The configured hosts (host.list): the Host choice shows only when there is one. */
  async loadHosts(): Promise<void> {
    if (!this.store.offers("hosts")) return;
    try {
      const reply = await this.request({ type: "host.list" });
      if (!reply.success) return;
      const names: string[] = reply.data.hosts;
      const chosen = this.host.value;
      this.host.replaceChildren(h("option", { value: "" }, "this machine"), ...names.map((n) => h("option", { value: n }, n)));
      this.host.value = names.includes(chosen) ? chosen : "";
      ($("host-choice") as HTMLElement).hidden = names.length === 0;
    } catch {
      /* dropped: agents are made on this machine */
    }
  }

  typed(value: string): void {
    const now = suggestions(value, this.recent, []);
    this.fill(now);
    if (this.timer) clearTimeout(this.timer);
    // fs.complete lists this machine's folders: none of them is a path on another host
    if (!completable(value) || !this.store.offers("fs-complete") || this.host.value) return;
    const ask = ++this.asked;
    // one question per pause in typing, not per key
    this.timer = setTimeout(async () => {
      try {
        const reply = await this.request({ type: "fs.complete", prefix: value });
        if (ask !== this.asked || !reply.success) return;
        this.fill(suggestions(value, this.recent, reply.data.directories));
      } catch {
        /* dropped: the recent folders stay */
      }
    }, 150);
  }

  fill(folders: string[]): void {
    $("recent-folders").replaceChildren(...folders.map((f) => h("option", { value: f })));
  }
}

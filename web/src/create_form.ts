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

  constructor(
    private store: Store,
    private request: Request,
  ) {
    const form = $("create") as HTMLFormElement;
    const cwd = form.elements.namedItem("cwd") as HTMLInputElement;
    const workspace = form.elements.namedItem("workspace") as HTMLInputElement;
    const sandbox = form.elements.namedItem("sandbox") as HTMLSelectElement;
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

  typed(value: string): void {
    const now = suggestions(value, this.recent, []);
    this.fill(now);
    if (this.timer) clearTimeout(this.timer);
    if (!completable(value) || !this.store.offers("fs-complete")) return;
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

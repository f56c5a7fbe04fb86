// The open agent's head: Files (the read-only tree, render/FileTree.tsx), Rename (agent.rename), and
// on a phone the "⋯" menu that holds these and the other actions (app.css shows it below 700 px).
// Each control shows only when the daemon offers its command (hello.capabilities).
import { askName } from "./rename.js";
import { FilesPanel } from "./render/FileTree";
import { agentName } from "./store/names";
import type { Store } from "./store/store";

type Request = (message: Record<string, unknown>) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const $ = (id: string) => document.getElementById(id) as HTMLElement;

export class HeadActions {
  files: FilesPanel;

  constructor(
    private store: Store,
    private request: Request,
    private toast: (text: string, kind: string) => void,
  ) {
    this.files = new FilesPanel($("files"), store, request);
    $("files-btn").addEventListener("click", () => this.showFiles($("files").hidden));
    $("rename").addEventListener("click", () => this.rename());
    const menu = $("agent-actions");
    $("more").addEventListener("click", () => this.menu(!menu.hasAttribute("data-open")));
    // a choice in the menu closes it (the action's own dialog or panel takes over); so do Escape
    // and a click elsewhere
    menu.addEventListener("click", (e) => {
      if ((e.target as HTMLElement).closest("button") && !(e.target as HTMLElement).closest(".controls")) this.menu(false);
    });
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && menu.hasAttribute("data-open")) {
        this.menu(false);
        $("more").focus();
      }
    });
    document.addEventListener("click", (e) => {
      if (menu.hasAttribute("data-open") && !(e.target as HTMLElement).closest("#agent-actions, #more")) this.menu(false);
    });
  }

  /** After every hello: the controls of the commands this daemon has. */
  offered(): void {
    $("files-btn").hidden = !this.store.offers("fs-read");
    $("rename").hidden = !this.store.offers("agent-rename");
    if ($("files-btn").hidden) this.showFiles(false);
  }

  /** Another agent was opened (or none): an open Files view follows it. */
  agentShown(): void {
    this.menu(false);
    if (!$("files").hidden) this.files.follow();
  }

  showFiles(open: boolean): void {
    $("files").hidden = !open;
    $("files-btn").setAttribute("aria-expanded", String(open));
    if (open) this.files.follow();
  }

  menu(open: boolean): void {
    const menu = $("agent-actions");
    if (open) menu.setAttribute("data-open", "");
    else menu.removeAttribute("data-open");
    $("more").setAttribute("aria-expanded", String(open));
    if (open) (menu.querySelector("button:not([hidden]):not(:disabled), select") as HTMLElement | null)?.focus();
  }

  async rename(): Promise<void> {
    const agent = this.store.agent(this.store.state.selected);
    if (!agent) return;
    const derived = agentName({ ...agent, info: { ...agent.info, name: undefined, display_name: undefined, alias: undefined } });
    const choice = await askName(agent.info.name || "", derived);
    if (!choice) return;
    try {
      const reply = await this.request({ type: "agent.rename", agent_id: agent.id, name: choice.name });
      if (!reply.success) this.toast(`Rename: ${reply.error.message}`, "error");
    } catch (err) {
      this.toast(`Rename: ${(err as Error).message}`, "error");
    }
  }
}

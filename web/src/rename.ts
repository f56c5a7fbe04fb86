// Renaming an agent (agent.rename, capability agent-rename): a small modal form with the name
// people see, prefilled; Save sends it, "Use the automatic name" clears it (the list goes back to
// folder and first prompt). The daemon keeps the name and tells every client (agent_changed).
import { h } from "./dom.js";

export type RenameChoice = { name: string | null } | null;

/** Asks for a new name; resolves the choice, or null when cancelled. */
export function askName(current: string, derived: string): Promise<RenameChoice> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (choice: RenameChoice) => {
      if (settled) return;
      settled = true;
      dialog.close();
      dialog.remove();
      resolve(choice);
    };
    const input = h("input", { name: "name", value: current, maxlength: "128", required: true, autocomplete: "off", placeholder: derived }) as HTMLInputElement;
    const form = h(
      "form",
      { method: "dialog", class: "rename-form" },
      h("label", {}, "Name ", input),
      h(
        "div",
        { class: "choices" },
        h("button", { type: "button", class: "rename-cancel", onclick: () => done(null) }, "Cancel"),
        h("button", { type: "button", class: "rename-clear", title: `Back to “${derived}”`, onclick: () => done({ name: null }) }, "Use the automatic name"),
        h("button", { type: "submit", class: "rename-save" }, "Save"),
      ),
    );
    form.addEventListener("submit", (event: Event) => {
      event.preventDefault();
      const name = input.value.trim();
      done(name ? { name } : { name: null });
    });
    const dialog = h("dialog", { class: "confirm rename", "aria-labelledby": "rename-title" }, h("h3", { id: "rename-title" }, "Rename the agent"), form) as HTMLDialogElement;
    dialog.addEventListener("cancel", (event: Event) => {
      event.preventDefault();
      done(null);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.select();
  });
}

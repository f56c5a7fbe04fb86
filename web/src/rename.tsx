// Renaming an agent (agent.rename, capability agent-rename): a small modal form with the name
// people see, prefilled; Save sends it, "Use the automatic name" clears it (the list goes back to
// folder and first prompt). The daemon keeps the name and tells every client (agent_changed).
import { ask } from "./render/Modal";

export type RenameChoice = { name: string | null } | null;

/** Asks for a new name; resolves the choice, or null when cancelled. */
export function askName(current: string, derived: string): Promise<RenameChoice> {
  return ask<RenameChoice>({ class: "confirm rename", titleId: "rename-title", focus: "input" }, null, (done) => {
    const submit = (event: Event) => {
      event.preventDefault();
      const input = (event.currentTarget as HTMLFormElement).elements.namedItem("name") as HTMLInputElement;
      const name = input.value.trim();
      done(name ? { name } : { name: null });
    };
    return (
      <>
        <h3 id="rename-title">Rename the agent</h3>
        <form method="dialog" class="rename-form" onSubmit={submit}>
          <label>
            Name <input name="name" defaultValue={current} maxLength={128} required autocomplete="off" placeholder={derived} />
          </label>
          <div class="choices">
            <button type="button" class="rename-cancel" onClick={() => done(null)}>
              Cancel
            </button>
            <button type="button" class="rename-clear" title={`Back to “${derived}”`} onClick={() => done({ name: null })}>
              Use the automatic name
            </button>
            <button type="submit" class="rename-save">
              Save
            </button>
          </div>
        </form>
      </>
    );
  });
}

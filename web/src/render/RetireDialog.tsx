// The Retire dialog of a workspace (PROTOCOL §10.1a workspace.retire), a modal <dialog>: the rest of
// the page is inert while it is open (focus stays inside), Escape closes it, and each choice has a
// one-key shortcut declared with aria-keyshortcuts (shown as <kbd>, kept out of its name), as the
// permission dialog's. Its steps are the store's (store/worktree.ts): choose a disposition; on
// confirmation_required, say the daemon's reason and offer the confirming retry (delete_confirmed, or
// discard_ignored); on a typed refusal, one sentence, and for a live agent the way out (stop it).
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";
import type { Disposition, WorkspaceState } from "../store/worktree";
import type { ChangesPanel } from "./ChangesView";

interface Choice {
  label: string;
  key?: string;
  danger?: boolean;
  act: () => void;
}

const MAX_IGNORED_SHOWN = 10;

export function RetireDialog({ ws, panel }: { ws: WorkspaceState; panel: ChangesPanel }) {
  const ref = useRef<HTMLDialogElement>(null);
  const step = ws.retire!;
  const close = () => panel.closeRetire(ws.id);
  const retire = (disposition: Disposition, discard = false) => () => void panel.retire(ws.id, disposition, discard);
  const name = ws.info.label ? `“${ws.info.label}”` : "this workspace";
  const branch = ws.info.branch ? <code>{ws.info.branch}</code> : "its branch";
  let body: ComponentChildren;
  let choices: Choice[] = [];
  switch (step.step) {
    case "choosing":
      body = (
        <>
          <p>Its worktree folder is removed; git refuses if anything in it is not committed.</p>
          <p>What becomes of {branch}?</p>
          {step.note ? <p class="retire-note" role="status">{step.note}</p> : null}
        </>
      );
      choices = [
        { label: "Keep the branch", key: "K", act: retire("keep") },
        { label: "Delete the branch if merged", key: "D", danger: true, act: retire("delete_if_merged") },
      ];
      break;
    case "sending":
      body = <p role="status">Retiring…</p>;
      break;
    case "confirm_branch":
      body = (
        <>
          <p class="retire-reason">Git says: {step.reason}.</p>
          <p>Delete the branch anyway? Commits that are only on it are lost.</p>
        </>
      );
      choices = [
        { label: "Delete anyway", key: "A", danger: true, act: retire("delete_confirmed") },
        { label: "Keep the branch", key: "K", act: retire("keep") },
      ];
      break;
    case "confirm_ignored":
      body = (
        <>
          <p class="retire-reason">The worktree holds {step.total === 1 ? "1 git-ignored path" : `${step.total} git-ignored paths`} that retiring deletes:</p>
          <ul class="retire-ignored">
            {step.ignored.slice(0, MAX_IGNORED_SHOWN).map((path) => (
              <li key={path}>
                <code>{path}</code>
              </li>
            ))}
            {step.total > MAX_IGNORED_SHOWN ? <li>and {step.total - MAX_IGNORED_SHOWN} more</li> : null}
          </ul>
        </>
      );
      choices = [{ label: "Delete them and retire", key: "D", danger: true, act: retire(step.disposition, true) }];
      break;
    case "refused":
      body = (
        <p class="retire-refusal" role="alert">
          {step.sentence}
        </p>
      );
      if (step.kind === "live") choices = [{ label: "Stop its agents", key: "S", act: () => void panel.stopAgents(ws.id) }];
      break;
  }
  const all: Choice[] = [...choices, { label: step.step === "refused" ? "Close" : "Cancel", key: "Escape", act: close }];

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  useLayoutEffect(() => {
    (ref.current?.querySelector(".choices button:not(:disabled)") as HTMLElement | null)?.focus();
  }, [step.step]);

  const keydown = (event: KeyboardEvent) => {
    if (event.key === "Tab") return wrapFocus(event, ref.current);
    if (event.ctrlKey || event.metaKey || event.altKey || event.key === "Escape") return; // Escape: the cancel event
    const hit = choices.find((c) => c.key && c.key.toLowerCase() === event.key.toLowerCase());
    if (hit) {
      event.preventDefault();
      hit.act();
    }
  };
  return (
    <dialog
      ref={ref}
      class="confirm retire"
      aria-labelledby="retire-title"
      onCancel={(event) => {
        event.preventDefault(); // Escape: no retirement, and the dialog goes
        close();
      }}
      onKeyDown={keydown}
    >
      <h3 id="retire-title">Retire {name}?</h3>
      {body}
      <div class="choices">
        {all.map((c) => (
          <button type="button" key={c.label} class={c.danger ? "choice danger" : "choice"} aria-keyshortcuts={c.key} onClick={c.act}>
            {c.label}
            {c.key ? <kbd aria-hidden="true">{c.key === "Escape" ? "Esc" : c.key}</kbd> : null}
          </button>
        ))}
      </div>
    </dialog>
  );
}

/** Tab from the last control goes to the first, Shift+Tab from the first to the last: a modal
 * dialog makes the page inert, but Chromium would let Tab leave for the browser's own controls. */
function wrapFocus(event: KeyboardEvent, dialog: HTMLDialogElement | null): void {
  const controls = dialog ? [...dialog.querySelectorAll<HTMLElement>("button:not(:disabled), [href], input, select, textarea, [tabindex]:not([tabindex='-1'])")] : [];
  if (!controls.length) return;
  const first = controls[0];
  const last = controls[controls.length - 1];
  if (event.shiftKey && document.activeElement === first) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && document.activeElement === last) {
    event.preventDefault();
    first.focus();
  }
}

// A confirmation asked in the page before an action that cannot be taken back (Kill, Remove): a
// modal dialog whose Cancel has the focus. It resolves true only on the action's own button;
// Cancel, Escape or closing it resolve false.
import { ask } from "./render/Modal";

export function confirmAction({ title, lines = [], action }: { title: string; lines?: string[]; action: string }): Promise<boolean> {
  return ask({ class: "confirm", titleId: "confirm-title", focus: ".confirm-cancel" }, false, (done) => (
    <>
      <h3 id="confirm-title">{title}</h3>
      {lines.map((line) => (
        <p>{line}</p>
      ))}
      <div class="choices">
        <button type="button" class="confirm-cancel" onClick={() => done(false)}>
          Cancel
        </button>
        <button type="button" class="danger confirm-action" onClick={() => done(true)}>
          {action}
        </button>
      </div>
    </>
  ));
}

// A confirmation asked in the page before an action that cannot be taken back (Kill, Remove): a
// modal <dialog> whose Cancel has the focus. It resolves true only on the action's own button;
// Cancel, Escape or closing it resolve false.
import { h } from "./dom.js";

export function confirmAction({ title, lines = [], action }: { title: string; lines?: string[]; action: string }): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const done = (yes: boolean) => {
      if (settled) return;
      settled = true;
      dialog.close();
      dialog.remove();
      resolve(yes);
    };
    const cancel = h("button", { type: "button", class: "confirm-cancel", onclick: () => done(false) }, "Cancel");
    const ok = h("button", { type: "button", class: "danger confirm-action", onclick: () => done(true) }, action);
    const dialog = <HTMLDialogElement>h(
      "dialog",
      { class: "confirm", "aria-labelledby": "confirm-title" },
      h("h3", { id: "confirm-title" }, title),
      lines.map((line) => h("p", {}, line)),
      h("div", { class: "choices" }, cancel, ok),
    );
    dialog.addEventListener("cancel", (event: Event) => {
      event.preventDefault(); // Escape: no action, and the dialog goes
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

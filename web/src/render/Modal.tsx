// A modal <dialog> as a Preact component, asked for as a promise: the page's questions before an
// action (Kill, Remove, Rename). showModal() traps the focus in it until it closes; Escape (the
// dialog's cancel) and every way out settle the promise once, with the answer or with `none`.
import { render, type ComponentChildren } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";

interface ModalProps {
  class: string;
  titleId: string;
  /** Escape: the same as the way out without an answer */
  onCancel(): void;
  /** the element to focus once open (a selector inside the dialog) */
  focus: string;
  children: ComponentChildren;
}

function Modal({ class: className, titleId, onCancel, focus, children }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    const target = dialog.querySelector(focus) as HTMLElement | null;
    if (target instanceof HTMLInputElement) target.select();
    else target?.focus();
  }, []);
  const cancel = (event: Event) => {
    event.preventDefault(); // Escape: no action, and the dialog goes
    onCancel();
  };
  return (
    <dialog ref={ref} class={className} aria-labelledby={titleId} onCancel={cancel}>
      {children}
    </dialog>
  );
}

/** Shows the dialog `body` draws; resolves with what it answers through `done`, or `none` on Escape. */
export function ask<T>(props: Omit<ModalProps, "children" | "onCancel">, none: T, body: (done: (answer: T) => void) => ComponentChildren): Promise<T> {
  return new Promise<T>((resolve) => {
    const host = document.createElement("div");
    document.body.append(host);
    let settled = false;
    const done = (answer: T) => {
      if (settled) return;
      settled = true;
      host.querySelector("dialog")?.close();
      render(null, host);
      host.remove();
      resolve(answer);
    };
    render(
      <Modal {...props} onCancel={() => done(none)}>
        {body(done)}
      </Modal>,
      host,
    );
  });
}

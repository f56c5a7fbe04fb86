// Permission and UI requests (PROTOCOL §9.5) as dialogs in the page. The server authors the
// choices; this only shows them and sends back the chosen choice_id (or, for a legacy request
// without choices, one of its options). A dialog goes away when *_resolved arrives, whoever answered.
// Keys: a choice's accelerator answers with it (focus inside the dialog); Escape in a permission
// dialog returns to the prompt and leaves it open (Escape is no answer); Escape in a UI dialog is
// its Dismiss button.
import { h } from "../dom.js";
import type { Request } from "../store/wire";

type Answer = (body: Record<string, unknown>) => void;
interface Choice {
  label: string;
  description?: string;
  intent: string;
  key?: string;
  body: Record<string, unknown>;
}
interface Detail {
  label?: string;
  value: string;
  format?: string;
}
import { diffStat, parseUnified, renderHunks, twoSided } from "./diff";

export function permissionDialog(req: Request, answer: Answer, onEscape?: () => void): HTMLElement {
  const title = `permission-${req.request_id}`;
  const choices: Choice[] = req.choices && req.choices.length
    ? req.choices.map((c) => ({ label: c.label, description: c.description, intent: c.intent, key: c.accelerator, body: { choice_id: c.id } }))
    : ((req.options as string[]) || []).map((o) => ({ label: o, intent: o === "deny" ? "deny" : "allow", body: { decision: o } }));
  const buttons = choices.map((c) =>
    h(
      "button",
      { type: "button", class: `choice intent-${c.intent}`, title: c.description, "aria-keyshortcuts": c.key, dataset: { key: c.key || "" }, onclick: () => answer(c.body) },
      c.label,
      c.key ? h("kbd", { "aria-hidden": "true" }, c.key) : null,
    ),
  );
  const dialog = h(
    "section",
    { class: "request permission", role: "alertdialog", "aria-labelledby": title, tabindex: "-1", dataset: { requestId: req.request_id } },
    h("h3", { id: title }, String(req.prompt || `Allow ${req.tool_name}?`)),
    ((req.details as Detail[]) || []).map(detail),
    h("div", { class: "choices" }, buttons),
  );
  dialog.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      // not an answer (the client authors no policy): leave the dialog open, go back to the prompt
      event.preventDefault();
      if (onEscape) onEscape();
      return;
    }
    const hit = choices.findIndex((c) => c.key && c.key === event.key);
    if (hit >= 0 && !event.ctrlKey && !event.metaKey && !event.altKey) buttons[hit].click();
  });
  return dialog;
}

function detail(d: Detail): HTMLElement {
  // a proposed change (a write's or an edit's "diff" detail) is shown as a coloured diff
  const parsed = d.format === "code" || d.label === "diff" ? parseUnified(d.value) : null;
  if (parsed) return h("div", { class: "detail detail-diff" }, h("figure", { class: twoSided(parsed.hunks) ? "render render-diff diff two-sided" : "render render-diff diff" }, h("figcaption", {}, h("span", { class: "diff-path" }, parsed.path), " ", h("span", { class: "diff-stat" }, diffStat(parsed.hunks))), renderHunks(parsed.hunks)));
  const value = d.format === "code" || d.format === "command" ? h("pre", { class: `detail-${d.format}` }, d.value) : h("span", { class: `detail-${d.format || "text"}` }, d.value);
  return h("div", { class: "detail" }, d.label ? h("span", { class: "detail-label" }, d.label + ": ") : null, value);
}

export function uiDialog(req: Request, answer: (value: unknown) => void): HTMLElement {
  const title = `ui-${req.request_id}`;
  const body: HTMLElement[] = [];
  let submit: (() => void) | null = null;
  if (req.kind === "select") {
    body.push(h("div", { class: "choices" }, ((req.options as string[]) || []).map((o) => h("button", { type: "button", class: "choice", onclick: () => answer(o) }, o))));
  } else if (req.kind === "confirm") {
    body.push(h("div", { class: "choices" }, h("button", { type: "button", class: "choice", onclick: () => answer("yes") }, "Yes"), h("button", { type: "button", class: "choice", onclick: () => answer("no") }, "No")));
  } else {
    const field = (req.kind === "editor"
      ? h("textarea", { rows: 8, "aria-labelledby": title, placeholder: req.placeholder })
      : h("input", { "aria-labelledby": title, placeholder: req.placeholder })) as HTMLInputElement | HTMLTextAreaElement;
    field.value = String(req.prefill || "");
    submit = () => answer(field.value);
    body.push(field, h("div", { class: "choices" }, h("button", { type: "submit", class: "choice" }, "OK")));
  }
  const dialog = h(
    "form",
    { class: `request ui ui-${req.kind}`, role: "dialog", "aria-labelledby": title, dataset: { requestId: req.request_id } },
    h("h3", { id: title }, req.title || "The agent asks"),
    req.message ? h("p", {}, String(req.message)) : null,
    body,
    h("button", { type: "button", class: "dismiss", onclick: () => answer(null) }, "Dismiss"),
  );
  dialog.addEventListener("submit", (event) => {
    event.preventDefault();
    if (submit) submit();
  });
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault(); // Escape is the Dismiss button: the tool is told there was no answer
    answer(null);
  });
  return dialog;
}

// Permission and UI requests (PROTOCOL §9.5) as Preact components on the store: the open agent's
// pending requests and those of its descendants (a background child with no client of its own asks
// its nearest interactive ancestor, PROTOCOL §6.3; these say who asks). The server authors the
// choices; this only shows them and sends back the chosen choice_id (or, for a legacy request
// without choices, one of its options). A dialog goes when the store drops its request — when
// *_resolved arrives, whoever answered, in every tab: the first response wins.
// Keys: a new dialog takes the focus; a choice's accelerator answers with it (focus inside the
// dialog); Escape in a permission dialog returns to the prompt and leaves it open (Escape is no
// answer); Escape in a UI dialog is its Dismiss button.
import { render } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { h } from "../dom.js";
import type { AgentState } from "../store/agent";
import { descends } from "../store/names";
import type { Store } from "../store/store";
import type { Request } from "../store/wire";
import { diffStat, parseUnified, renderHunks, twoSided, type Hunk } from "./diff";
import { Foreign } from "./Foreign";

export interface RequestActions {
  /** Sends the answer; whether it went (the dialog then shows it answered until it is resolved). */
  answer(asker: AgentState, req: Request, body: Record<string, unknown>): boolean;
  label(agent: AgentState): string;
  /** Escape in a permission dialog: back to the prompt. */
  toPrompt(): void;
  /** every request shown is remembered here: a resolution is worded from its request */
  asked: Map<string, Request>;
}

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

/** The requests open for the selected agent and its descendants, each with who asks. */
export function openRequests(store: Store): [AgentState, Request][] {
  const { agents, selected } = store.state;
  const agent = selected ? agents.get(selected) : undefined;
  if (!agent) return [];
  const open: [AgentState, Request][] = [];
  for (const other of agents.values()) {
    if (other === agent || descends(agents, other, agent.id)) for (const req of other.requests.values()) open.push([other, req]);
  }
  return open;
}

function Requests({ store, actions }: { store: Store; actions: RequestActions }) {
  const [, redraw] = useState(0);
  const drawn = useRef("");
  useEffect(
    () =>
      store.subscribe(() => {
        // only when the set of open requests (or who is open) changed: a streamed delta changes none
        const key = `${store.state.selected} ${openRequests(store)
          .map(([, r]) => r.request_id)
          .join(" ")}`;
        if (key !== drawn.current) redraw((n) => n + 1);
      }),
    [store],
  );
  const open = openRequests(store);
  drawn.current = `${store.state.selected} ${open.map(([, r]) => r.request_id).join(" ")}`;
  const selected = store.state.selected;
  return (
    <>
      {open.map(([asker, req]) => {
        actions.asked.set(req.request_id, req);
        const who = asker.id !== selected ? `Asked by ${actions.label(asker)} (${asker.id})` : null;
        const answer = (body: Record<string, unknown>) => actions.answer(asker, req, body);
        return req.type === "ui_request" ? (
          <UiDialog key={req.request_id} req={req} who={who} answer={answer} />
        ) : (
          <PermissionDialog key={req.request_id} req={req} who={who} answer={answer} toPrompt={actions.toPrompt} />
        );
      })}
    </>
  );
}

/** A dialog's answered state, and the focus on its first control when it first shows. */
function useDialog(answer: (body: Record<string, unknown>) => boolean): [boolean, (body: Record<string, unknown>) => void, preact.RefObject<HTMLElement>] {
  const [answered, setAnswered] = useState(false);
  const ref = useRef<HTMLElement>(null);
  useLayoutEffect(() => {
    (ref.current?.querySelector("button, input, textarea") as HTMLElement | null)?.focus();
  }, []);
  const send = (body: Record<string, unknown>) => {
    if (!answered && answer(body)) setAnswered(true);
  };
  return [answered, send, ref];
}

function PermissionDialog({ req, who, answer, toPrompt }: { req: Request; who: string | null; answer: (body: Record<string, unknown>) => boolean; toPrompt: () => void }) {
  const [answered, send, ref] = useDialog(answer);
  const title = `permission-${req.request_id}`;
  const choices: Choice[] =
    req.choices && req.choices.length
      ? req.choices.map((c) => ({ label: c.label, description: c.description, intent: c.intent, key: c.accelerator, body: { choice_id: c.id } }))
      : ((req.options as string[]) || []).map((o) => ({ label: o, intent: o === "deny" ? "deny" : "allow", body: { decision: o } }));
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      // not an answer (the client authors no policy): leave the dialog open, go back to the prompt
      event.preventDefault();
      toPrompt();
      return;
    }
    const hit = choices.find((c) => c.key && c.key === event.key);
    if (hit && !event.ctrlKey && !event.metaKey && !event.altKey) send(hit.body);
  };
  return (
    <section ref={ref} class={answered ? "request permission answered" : "request permission"} role="alertdialog" aria-labelledby={title} tabIndex={-1} data-request-id={req.request_id} onKeyDown={onKeyDown}>
      {who ? <p class="asker">{who}</p> : null}
      <h3 id={title}>{String(req.prompt || `Allow ${req.tool_name}?`)}</h3>
      {((req.details as Detail[]) || []).map((d, i) => (
        <DetailView key={i} d={d} />
      ))}
      <div class="choices">
        {choices.map((c) => (
          <button type="button" class={`choice intent-${c.intent}`} title={c.description} aria-keyshortcuts={c.key} data-key={c.key || ""} disabled={answered} onClick={() => send(c.body)}>
            {c.label}
            {c.key ? <kbd aria-hidden="true">{c.key}</kbd> : null}
          </button>
        ))}
      </div>
    </section>
  );
}

// A proposed change (a write's or an edit's "diff" detail) is shown as a coloured diff.
function DetailView({ d }: { d: Detail }) {
  const parsed = useMemo(() => (d.format === "code" || d.label === "diff" ? parseUnified(d.value) : null), [d]);
  if (parsed) {
    return (
      <div class="detail detail-diff">
        <Foreign tag="figure" class={twoSided(parsed.hunks) ? "render render-diff diff two-sided" : "render render-diff diff"} value={parsed} make={diffParts} />
      </div>
    );
  }
  const value = d.format === "code" || d.format === "command" ? <pre class={`detail-${d.format}`}>{d.value}</pre> : <span class={`detail-${d.format || "text"}`}>{d.value}</span>;
  return (
    <div class="detail">
      {d.label ? <span class="detail-label">{d.label + ": "}</span> : null}
      {value}
    </div>
  );
}

function diffParts(parsed: { path: string; hunks: Hunk[] }): Node {
  const parts = document.createDocumentFragment();
  parts.append(h("figcaption", {}, h("span", { class: "diff-path" }, parsed.path), " ", h("span", { class: "diff-stat" }, diffStat(parsed.hunks))), ...renderHunks(parsed.hunks));
  return parts;
}

function UiDialog({ req, who, answer }: { req: Request; who: string | null; answer: (body: Record<string, unknown>) => boolean }) {
  const [answered, send, ref] = useDialog(answer);
  const field = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const title = `ui-${req.request_id}`;
  const value = (v: unknown) => send({ value: v });
  let body;
  if (req.kind === "select") {
    body = (
      <div class="choices">
        {((req.options as string[]) || []).map((o) => (
          <button type="button" class="choice" disabled={answered} onClick={() => value(o)}>
            {o}
          </button>
        ))}
      </div>
    );
  } else if (req.kind === "confirm") {
    body = (
      <div class="choices">
        <button type="button" class="choice" disabled={answered} onClick={() => value("yes")}>
          Yes
        </button>
        <button type="button" class="choice" disabled={answered} onClick={() => value("no")}>
          No
        </button>
      </div>
    );
  } else {
    const placeholder = req.placeholder as string | undefined;
    const prefill = String(req.prefill || "");
    body = (
      <>
        {req.kind === "editor" ? (
          <textarea ref={field} rows={8} aria-labelledby={title} placeholder={placeholder} defaultValue={prefill} disabled={answered} />
        ) : (
          <input ref={field} aria-labelledby={title} placeholder={placeholder} defaultValue={prefill} disabled={answered} />
        )}
        <div class="choices">
          <button type="submit" class="choice" disabled={answered}>
            OK
          </button>
        </div>
      </>
    );
  }
  const onSubmit = (event: Event) => {
    event.preventDefault();
    if (field.current) value(field.current.value);
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== "Escape") return;
    event.preventDefault(); // Escape is the Dismiss button: the tool is told there was no answer
    value(null);
  };
  return (
    <form ref={ref as preact.RefObject<HTMLFormElement>} class={`request ui ui-${req.kind}${answered ? " answered" : ""}`} role="dialog" aria-labelledby={title} data-request-id={req.request_id} onSubmit={onSubmit} onKeyDown={onKeyDown}>
      {who ? <p class="asker">{who}</p> : null}
      <h3 id={title}>{req.title || "The agent asks"}</h3>
      {req.message ? <p>{String(req.message)}</p> : null}
      {body}
      <button type="button" class="dismiss" disabled={answered} onClick={() => value(null)}>
        Dismiss
      </button>
    </form>
  );
}

/** Renders the open requests into `el` and keeps them current. */
export function mountRequests(el: HTMLElement, store: Store, actions: RequestActions): void {
  render(<Requests store={store} actions={actions} />, el);
}

// What the wire carries, in the words a person reads — the twin of shard.protocol.words (Python),
// held to the same cases by tests/browser/test_modules.py.
//
// Counts: at most three significant digits with a unit — 999, 1k, 1.05k, 12.5k, 253k, 1M, 1.25M —
// rounded half up, and never "1000k" (that is 1M).
// Who answered: a resolution's source_label (the name a person knows that client by: "Chrome on
// Linux", "terminal (pid 4242)", an SDK client's name); the viewer's own answer is `me` ("you");
// the daemon's and the runtime's own resolutions say what happened. Never a connection id.

const UNITS = ["", "k", "M", "B"];

interface Resolution {
  type?: string;
  intent?: string;
  decision?: string;
  choice_id?: string;
  value?: unknown;
  source?: string;
  source_label?: string;
}
const CONNECTION_ID = /^(unix|websocket)-client-\d+$/;
const VERBS: Record<string, string> = { allow: "Allowed", persist: "Always allowed", allow_always: "Always allowed", deny: "Denied" };
const SYSTEM: Record<string, string> = {
  headless: "{verb} by the headless policy",
  timeout: "{verb}: nobody answered in time",
  abort: "{verb}: the turn was aborted",
  "runtime-exited": "{verb}: the agent's runtime stopped",
  "closed-while-disconnected": "Closed while this client was disconnected",
  client: "{verb} by a client",
};

// An agent's status as a person reads it (the wire's values are identifiers)
const STATUS_WORDS: Record<string, string> = {
  idle: "idle",
  streaming: "working",
  waiting_for_permission: "waiting for permission",
  waiting_for_ui: "waiting for an answer",
  compacting: "compacting",
  error: "error",
};

export function statusWords(value: string | null | undefined): string {
  if (!value) return "";
  return STATUS_WORDS[value] || String(value).replaceAll("_", " ");
}

export function tokens(count: number | null | undefined): string {
  if (count === undefined || count === null) return "";
  let n = count >= 0 ? Math.floor(count + 0.5) : -Math.floor(-count + 0.5);
  if (n < 0) return "-" + tokens(-n);
  if (n < 1000) return String(n);
  const last = UNITS.length - 1;
  for (let power = 1; power <= last; power++) {
    const scale = 1000 ** power;
    if (n >= 1000 * scale && power < last) continue;
    const decimals = n < 10 * scale ? 2 : n < 100 * scale ? 1 : 0;
    const step = 10 ** decimals;
    const rounded = Math.floor((n * step * 2 + scale) / (2 * scale)); // in 1/step units, half up
    if (rounded >= 1000 * step && power < last) continue; // 999_999 is 1M, not 1000k
    const whole = Math.floor(rounded / step);
    const frac = String(rounded % step).padStart(decimals, "0").replace(/0+$/, "");
    return (frac ? `${whole}.${frac}` : String(whole)) + UNITS[power];
  }
  return String(n);
}

export function answerer(source: string | undefined, label: string | undefined, mine = false, me = "you"): string {
  if (mine) return me;
  if (label) return label;
  if (source && CONNECTION_ID.test(source)) return source.startsWith("websocket") ? "a web client" : "a local client";
  return source || "another client";
}

function sentence(verb: string, source: string | undefined, label: string | undefined, mine: boolean, me: string): string {
  if (!mine && !label && source !== undefined && source in SYSTEM) return SYSTEM[source].replace("{verb}", verb);
  return `${verb} by ${answerer(source, label, mine, me)}`;
}

// "Allowed by Chrome on Linux", "Denied by you": a permission_resolved / ui_resolved (or the answer a
// synced tool call keeps), worded by its intent — or, from an older runtime, by the request it
// closes when the page still has it (a choice_id means what its choice's intent says).
export function resolutionText(ev: Resolution, request: { choices?: unknown } | null | undefined, mine = false, me = "you"): string {
  if (ev.type === "ui_resolved") {
    if (ev.value === null || ev.value === undefined) return sentence("Dismissed", ev.source, ev.source_label, mine, me);
    const shown = Array.isArray(ev.value) ? ev.value.join(", ") : String(ev.value);
    return `${sentence("Answered", ev.source, ev.source_label, mine, me)}: ${shown}`;
  }
  let intent = ev.intent || ev.decision || (ev.choice_id === undefined ? "deny" : "");
  if (!ev.intent && ev.choice_id !== undefined && request) {
    const chosen = ((request.choices || []) as { id: string; intent: string }[]).find((c) => c.id === ev.choice_id);
    intent = chosen ? chosen.intent : "";
  }
  return sentence(VERBS[intent] || "Answered", ev.source, ev.source_label, mine, me);
}

// RenderDescriptor → DOM (PROTOCOL §11): text, kv, diff, tree, progress, status, command, path_list,
// code. An unknown kind shows as JSON, so a newer daemon never breaks the page.
import { h } from "../dom.js";

// A RenderDescriptor as it comes off the wire: its shape depends on its kind, and an unknown kind
// must render too, so the renderers read it loosely.
type D = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- see above
type Node_ = { label: string; kind?: string; children?: Node_[] };
import { diffStat, renderHunks, twoSided } from "./diff";

export function renderDescriptor(d: D): HTMLElement {
  const render = KINDS[d && d.kind];
  const body = render ? render(d) : h("pre", {}, JSON.stringify(d, null, 2));
  return h("div", { class: `render render-${d && d.kind}`, dataset: { kind: String(d && d.kind) } }, body);
}

const KINDS: Record<string, (d: D) => HTMLElement> = {
  text: (d: D) => h("pre", {}, d.text),
  kv: (d: D) => h("dl", { class: "kv" }, d.pairs.map((p: { k: string; v: string }) => [h("dt", {}, p.k), h("dd", {}, p.v)])),
  diff: (d: D) =>
    h(
      "figure",
      { class: twoSided(d.hunks) ? "diff two-sided" : "diff" },
      h("figcaption", {}, h("span", { class: "diff-path" }, d.path), " ", h("span", { class: "diff-stat" }, diffStat(d.hunks))),
      d.hunks.length === 0 ? h("p", { class: "no-change" }, "No change") : null, // a write that changed nothing
      renderHunks(d.hunks),
    ),
  tree: (d: D) => h("ul", { class: "tree" }, treeNode(d.root)),
  progress: (d: D) =>
    h(
      "div",
      { class: "progress" },
      h("label", {}, d.label, " ", h("progress", { max: d.total ?? undefined, value: d.total ? d.current : undefined })),
      d.total ? ` ${d.current}/${d.total}` : ` ${d.current}`,
    ),
  status: (d: D) => h("span", { class: `status tone-${d.tone}` }, d.label),
  command: (d: D) =>
    h(
      "div",
      { class: "command" },
      h("pre", {}, "$ " + d.command),
      d.exitCode !== undefined || d.durationMs !== undefined ? footer(d.exitCode, d.durationMs) : null,
    ),
  path_list: (d: D) =>
    h(
      "ul",
      { class: "path-list" },
      d.paths.map((p: { path: string; kind: string; hint?: string }) => h("li", { class: `path-${p.kind}` }, h("code", {}, p.path), p.hint ? h("span", { class: "hint" }, " " + p.hint) : null)),
    ),
  code: (d: D) => h("figure", { class: "code" }, d.path ? h("figcaption", {}, d.path) : null, h("pre", {}, h("code", { "data-lang": d.lang }, d.text))),
};

function treeNode(node: Node_): HTMLElement {
  return h(
    "li",
    { class: `tree-${node.kind || "node"}` },
    node.label,
    node.children && node.children.length ? h("ul", {}, node.children.map(treeNode)) : null,
  );
}

// exit code and duration, rendered by the client from structured tool_result fields (saga 26haas)
export function footer(exitCode?: number | null, durationMs?: number | null): HTMLElement {
  return h("div", { class: `tool-footer${exitCode ? " failed" : ""}` }, "↳ " + footerText(exitCode, durationMs));
}

// "exit 2 · 1.5 s": a card's one-line summary and its footer
export function footerText(exitCode?: number | null, durationMs?: number | null): string {
  const parts: string[] = [];
  if (exitCode !== undefined && exitCode !== null) parts.push(`exit ${exitCode}`);
  if (durationMs !== undefined && durationMs !== null) parts.push(durationMs >= 1000 ? `${(durationMs / 1000).toFixed(1)} s` : `${Math.round(durationMs)} ms`);
  return parts.join(" · ");
}

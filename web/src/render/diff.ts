// A diff as a person reads it: coloured, with line numbers; unified, and side by side where the
// card is wide enough (both are built; a container query in app.css shows one). Hunks come from a
// RenderDescriptor (§11) or from a unified diff's text (a permission request's "diff" detail,
// parsed with the `diff` package). Every line is a text node: nothing in a diff becomes markup.
import { parsePatch } from "diff";
import { pairedSegments, type Segment } from "./word_diff";

export interface Hunk {
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  lines: string[];
}

type Row = { kind: "add" | "del" | "ctx"; old: number | null; new: number | null; text: string; words?: Segment[] };

function el(tag: string, cls?: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function rows(hunk: Hunk): Row[] {
  let old = hunk.old_start;
  let now = hunk.new_start;
  const out: Row[] = [];
  const words = pairedSegments(hunk.lines);
  for (const [i, line] of hunk.lines.entries()) {
    if (line.startsWith("+")) out.push({ kind: "add", old: null, new: now++, text: line, words: words.get(i) });
    else if (line.startsWith("-")) out.push({ kind: "del", old: old++, new: null, text: line, words: words.get(i) });
    else if (line.startsWith("\\")) continue; // "\ No newline at end of file"
    else out.push({ kind: "ctx", old: old++, new: now++, text: line });
  }
  return out;
}

/** The hunks as a unified view (`pre.hunk` with `.add` / `.del` / `.ctx` lines) and a split one. */
export function renderHunks(hunks: Hunk[]): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (const hunk of hunks) {
    const unified = el("pre", "hunk");
    unified.append(el("span", "hunk-head", `@@ -${hunk.old_start},${hunk.old_lines} +${hunk.new_start},${hunk.new_lines} @@\n`));
    const split = el("div", "hunk-split");
    split.setAttribute("aria-hidden", "true"); // the unified view says the same to a screen reader
    const lines = rows(hunk);
    for (const row of lines) {
      const line = el("span", `line line-${row.kind}`);
      line.dataset.old = row.old === null ? "" : String(row.old);
      line.dataset.new = row.new === null ? "" : String(row.new);
      line.append(withWords(el("span", row.kind), row.text.slice(0, 1), row), document.createTextNode("\n"));
      unified.append(line);
    }
    // side by side: a deletion pairs with the addition that follows it
    for (let i = 0; i < lines.length; ) {
      const row = lines[i];
      if (row.kind === "ctx") {
        split.append(cell(row, "left"), cell(row, "right"));
        i += 1;
        continue;
      }
      const dels: Row[] = [];
      const adds: Row[] = [];
      while (i < lines.length && lines[i].kind === "del") dels.push(lines[i++]);
      while (i < lines.length && lines[i].kind === "add") adds.push(lines[i++]);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) split.append(cell(dels[k] || null, "left"), cell(adds[k] || null, "right"));
    }
    out.push(unified, split);
  }
  return out;
}

function cell(row: Row | null, side: "left" | "right"): HTMLElement {
  const node = el("span", `split-cell split-${side} split-${row ? row.kind : "none"}`);
  if (!row) return node;
  const number = side === "left" ? row.old : row.new;
  node.append(el("span", "split-no", number === null ? "" : String(number)), withWords(el("span", "split-text"), "", row));
  return node;
}

/** The line's text into `node` after `marker`: whole, or with its changed words marked (<mark>, so
 * the change is in the markup a screen reader and a copy see, not in colour alone). */
function withWords(node: HTMLElement, marker: string, row: Row): HTMLElement {
  if (!row.words) {
    node.textContent = marker + row.text.slice(1);
    return node;
  }
  if (marker) node.append(marker);
  for (const part of row.words) node.append(part.changed ? el("mark", `word-${row.kind}`, part.text) : document.createTextNode(part.text));
  return node;
}

/** Hunks from a unified diff's text; null when it is not one. */
export function parseUnified(text: string): { path: string; hunks: Hunk[] } | null {
  if (!/^(---|\+\+\+|@@)/m.test(text)) return null;
  try {
    const [patch] = parsePatch(text);
    if (!patch || !patch.hunks.length) return null;
    const path = (patch.newFileName || patch.oldFileName || "").replace(/^[ab]\//, "");
    return { path, hunks: patch.hunks.map((h) => ({ old_start: h.oldStart, old_lines: h.oldLines, new_start: h.newStart, new_lines: h.newLines, lines: h.lines })) };
  } catch {
    return null;
  }
}

/** Whether side by side says more than unified: some hunk both removes and adds lines. */
export function twoSided(hunks: Hunk[]): boolean {
  return hunks.some((h) => h.lines.some((l) => l.startsWith("-")) && h.lines.some((l) => l.startsWith("+")));
}

/** A one-line count of a diff: "+3 −1". */
export function diffStat(hunks: Hunk[]): string {
  let add = 0;
  let del = 0;
  for (const hunk of hunks) for (const line of hunk.lines) (line.startsWith("+") ? add++ : line.startsWith("-") ? del++ : 0);
  return `+${add} −${del}`;
}

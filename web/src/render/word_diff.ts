// Which words of a changed line changed: a deletion and the addition paired with it (the k-th
// removed line of a run with the k-th added one, as the side-by-side view pairs them) are compared
// word by word (the `diff` package's diffWordsWithSpace), and the words only one side has are marked.
// Lines too unlike each other (most of their text changed) are left whole: marking nearly every word
// says less than the line colour already does. Pure: segments of text, no DOM.
import { diffWordsWithSpace } from "diff";

export interface Segment {
  text: string;
  changed: boolean;
}

/** Lines longer than this are not compared (the comparison is quadratic at worst). */
export const MAX_COMPARED = 2000;

/** The old and new line as segments, or null when a word-level mark would not help. */
export function wordSegments(before: string, after: string): { del: Segment[]; add: Segment[] } | null {
  if (before === after || before.length > MAX_COMPARED || after.length > MAX_COMPARED) return null;
  const parts = diffWordsWithSpace(before, after);
  const del: Segment[] = [];
  const add: Segment[] = [];
  let same = 0;
  for (const part of parts) {
    if (part.added) add.push({ text: part.value, changed: true });
    else if (part.removed) del.push({ text: part.value, changed: true });
    else {
      same += part.value.trim().length;
      del.push({ text: part.value, changed: false });
      add.push({ text: part.value, changed: false });
    }
  }
  const longer = Math.max(before.trim().length, after.trim().length);
  if (!longer || same / longer < 0.3) return null;
  return { del, add };
}

/** For each row index of a hunk's lines ("+…", "-…", " …"), its segments when it is one side of a
 * pair; the marker character is not part of the text compared. */
export function pairedSegments(lines: string[]): Map<number, Segment[]> {
  const out = new Map<number, Segment[]>();
  for (let i = 0; i < lines.length; ) {
    if (!lines[i].startsWith("-")) {
      i += 1;
      continue;
    }
    const dels: number[] = [];
    const adds: number[] = [];
    while (i < lines.length && lines[i].startsWith("-")) dels.push(i++);
    while (i < lines.length && lines[i].startsWith("\\")) i++;
    while (i < lines.length && lines[i].startsWith("+")) adds.push(i++);
    for (let k = 0; k < Math.min(dels.length, adds.length); k++) {
      const pair = wordSegments(lines[dels[k]].slice(1), lines[adds[k]].slice(1));
      if (!pair) continue;
      out.set(dels[k], pair.del);
      out.set(adds[k], pair.add);
    }
  }
  return out;
}

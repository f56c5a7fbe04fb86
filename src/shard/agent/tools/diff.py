"""Unified-diff hunks for the ``diff`` RenderDescriptor (shape pinned in ``shard.protocol.render``)."""

from __future__ import annotations

import difflib

from shard.protocol.render import DiffRender, Hunk

CONTEXT = 3
MAX_DIFF_LINES = 2000  # a render is for eyes; a bigger change is summarised


def lines_of(text: str) -> list[str]:
    """LF-terminated lines, as editors number them (form feeds and U+2028 stay inside a line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def hunks(old: str, new: str) -> list[Hunk]:
    a, b = lines_of(old), lines_of(new)
    out: list[Hunk] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in a[a1:a2])
                continue
            if tag in ("replace", "delete"):
                lines.extend("-" + line for line in a[a1:a2])
            if tag in ("replace", "insert"):
                lines.extend("+" + line for line in b[b1:b2])
        out.append(
            Hunk(
                old_start=i1 + 1 if i2 > i1 else i1,
                old_lines=i2 - i1,
                new_start=j1 + 1 if j2 > j1 else j1,
                new_lines=j2 - j1,
                lines=lines[:MAX_DIFF_LINES],
            )
        )
    return out


def diff_render(path: str, old: str, new: str) -> DiffRender:
    return DiffRender(path=path, hunks=hunks(old, new))


def unified_text(path: str, old: str, new: str) -> str:
    """The same change as text, for a permission request's details."""
    lines = difflib.unified_diff(
        lines_of(old), lines_of(new), f"a/{path}", f"b/{path}", n=CONTEXT, lineterm=""
    )
    text = "\n".join(lines)
    return text if len(text) < 64_000 else text[:64_000] + "\n… (diff truncated)"

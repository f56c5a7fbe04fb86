"""``edit``: replace exact text in a file — one occurrence per edit, several edits all or none.

Each edit's ``old_text`` must occur exactly once. When it does not occur verbatim, a tolerant search
locates it ignoring differences in horizontal whitespace, trailing spaces and typographic quotes —
and only the span it found is rewritten, so the rest of the file, its CRLF line endings and its BOM
stay byte-identical. Zero or several matches is an error that says which edit and where. The edits
apply in order to the text as the previous ones left it; if any fails, nothing is written.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.diff import diff_render, unified_text
from shard.agent.tools.files import BOM, TextFile, load_text, write_atomic
from shard.agent.tools.paths import display, resolve
from shard.protocol.content import TextContent
from shard.protocol.permissions import PermissionDetail
from shard.protocol.render import RenderDescriptor

# typographic quotes and no-break spaces a model may write for plain ones
_QUOTES = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u00a0": " ",
    }
)


class Replacement(ToolParams):
    old_text: str = Field(min_length=1, description="Exact text to replace; it must occur once.")
    new_text: str = Field(description="The text to put in its place.")


class EditParams(ToolParams):
    path: str = Field(description="File to edit, relative to the working directory or absolute.")
    edits: list[Replacement] = Field(
        min_length=1, description="Replacements, applied in order; all succeed or none is written."
    )


@dataclass(slots=True)
class EditPlan:
    path: Path
    shown: str
    file: TextFile
    new_text: str
    tolerant: list[int]  # 1-based numbers of edits located by the tolerant search


class EditTool(Tool[EditParams]):
    name = "edit"
    description = (
        "Replace exact text in a file. Each edit's old_text must appear exactly once (include enough "
        "surrounding lines to make it unique). Several edits apply in order, all or none."
    )
    params = EditParams
    read_only = False

    def touched_paths(self, args: EditParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    def plan(self, args: EditParams, ctx: ToolContext) -> EditPlan:
        path = resolve(ctx.cwd, args.path)
        shown = display(ctx.cwd, path)
        file = load_text(path, shown)
        text, tolerant = file.text, []
        for number, edit in enumerate(args.edits, start=1):
            old = _with_newline(edit.old_text, file.newline)
            new = _with_newline(edit.new_text, file.newline)
            start, end, exact = _locate(text, old, shown, number, len(args.edits))
            if not exact:
                tolerant.append(number)
            text = text[:start] + new + text[end:]
        return EditPlan(path, shown, file, text, tolerant)

    def preview(self, args: EditParams, ctx: ToolContext) -> tuple[str, str]:
        plan = self.plan(args, ctx)
        return _lf(plan.file.text), _lf(plan.new_text)

    def describe(self, args: EditParams, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        plan = self.plan(args, ctx)  # an edit that cannot apply fails here, before anyone is asked
        old, new = _lf(plan.file.text), _lf(plan.new_text)
        n = len(args.edits)
        if old == new:
            return f"Edit {plan.shown} (no change: the edits leave it as it is)?", [
                PermissionDetail(label="path", value=plan.shown, format="path"),
                PermissionDetail(label="diff", value="no change", format="text"),
            ]
        return f"Edit {plan.shown} ({n} change{'s' if n > 1 else ''})?", [
            PermissionDetail(label="path", value=plan.shown, format="path"),
            PermissionDetail(label="diff", value=unified_text(plan.shown, old, new), format="code"),
        ]

    def describe_outside(self, args: EditParams, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        shown = display(ctx.cwd, resolve(ctx.cwd, args.path))
        n = len(args.edits)
        details = [PermissionDetail(label="path", value=shown, format="path")]
        for number, edit in enumerate(args.edits, start=1):
            label = f"change {number} of {n}" if n > 1 else "change"
            lines = [f"-{line}" for line in edit.old_text.split("\n")]
            lines += [f"+{line}" for line in edit.new_text.split("\n")]
            details.append(PermissionDetail(label=label, value="\n".join(lines), format="code"))
        return f"Edit {shown} ({n} change{'s' if n > 1 else ''})?", details

    def start_render(self, args: EditParams, ctx: ToolContext) -> RenderDescriptor | None:
        try:
            old, new = self.preview(args, ctx)
        except ToolFailure:
            return None
        return diff_render(display(ctx.cwd, resolve(ctx.cwd, args.path)), old, new)

    async def execute(self, args: EditParams, ctx: ToolContext) -> ToolOutput:
        return await asyncio.to_thread(self._apply, args, ctx)

    def _apply(self, args: EditParams, ctx: ToolContext) -> ToolOutput:
        plan = self.plan(args, ctx)
        if plan.new_text == plan.file.text:  # not rewritten: bytes and modification time stay
            text = f"No change: the edits leave {plan.shown} as it was."
            return ToolOutput(content=TextContent(text=text), render=diff_render(plan.shown, "", ""))
        data = plan.new_text.encode("utf-8")
        if plan.file.bom:
            data = BOM + data
        try:
            write_atomic(plan.path, data, plan.file.mode)
        except OSError as exc:
            raise ToolFailure(f"cannot write {plan.shown}: {exc.strerror}") from None
        old, new = _lf(plan.file.text), _lf(plan.new_text)
        render = diff_render(plan.shown, old, new)
        added = sum(1 for h in render.hunks for line in h.lines if line.startswith("+"))
        removed = sum(1 for h in render.hunks for line in h.lines if line.startswith("-"))
        n = len(args.edits)
        text = f"Edited {plan.shown}: {n} edit{'s' if n > 1 else ''} applied (+{added} -{removed} lines)."
        if plan.tolerant:
            which = ", ".join(str(i) for i in plan.tolerant)
            text += f" Edit {which} matched after ignoring whitespace/quote differences."
        return ToolOutput(content=TextContent(text=text), render=render)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _with_newline(text: str, newline: str) -> str:
    if newline == "\r\n":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text


def _locate(text: str, old: str, shown: str, number: int, total: int) -> tuple[int, int, bool]:
    """The span of ``old`` in ``text``: (start, end, exact?). Raises ToolFailure naming the edit."""
    label = f"edit {number} of {total}" if total > 1 else "the edit"
    first = text.find(old)
    if first >= 0:
        second = text.find(old, first + 1)
        if second < 0:
            return first, first + len(old), True
        lines = _match_lines(text, old)
        where = ", ".join(map(str, sorted(set(lines))[:10]))
        raise ToolFailure(
            f"{label}: old_text occurs {len(lines)} times in {shown} (on lines {where}); "
            "include more surrounding text to make it unique"
        )
    norm_text, index = _normalize(text)
    norm_old, _ = _normalize(old)
    norm_old = norm_old.strip(" ")
    if norm_old:
        found = _all(norm_text, norm_old)
        if len(found) == 1:
            at = found[0]
            start, end = index[at], index[at + len(norm_old) - 1] + 1
            if old[:1] in (" ", "\t"):  # old_text brought its indentation: replace the line's too
                while start > 0 and text[start - 1] in " \t":
                    start -= 1
            return start, end, False
        if len(found) > 1:
            lines = sorted({text.count("\n", 0, index[f]) + 1 for f in found})
            raise ToolFailure(
                f"{label}: old_text occurs {len(found)} times in {shown} when whitespace is ignored "
                f"(on lines {', '.join(map(str, lines[:10]))}); include more surrounding text"
            )
    raise ToolFailure(
        f"{label}: old_text was not found in {shown}; read the file again and copy the text exactly"
    )


def _match_lines(text: str, needle: str) -> list[int]:
    lines, at = [], text.find(needle)
    while at >= 0:
        lines.append(text.count("\n", 0, at) + 1)
        at = text.find(needle, at + 1)
    return lines


def _all(haystack: str, needle: str) -> list[int]:
    out, at = [], haystack.find(needle)
    while at >= 0:
        out.append(at)
        at = haystack.find(needle, at + 1)
    return out


def _normalize(text: str) -> tuple[str, list[int]]:
    """Collapse runs of spaces/tabs to one space, drop them at line ends and CRs, unify quotes.

    Returns the normalized text and, for each of its characters, the index it came from.
    """
    out: list[str] = []
    index: list[int] = []
    pending_space = -1  # index of the first blank of a run not yet written
    for i, ch in enumerate(text.translate(_QUOTES)):
        if ch in " \t":
            if pending_space < 0:
                pending_space = i
            continue
        if ch == "\r":
            continue
        if pending_space >= 0:
            if ch != "\n" and out:  # blanks before a line end, or at the start, vanish
                out.append(" ")
                index.append(pending_space)
            pending_space = -1
        out.append(ch)
        index.append(i)
    return "".join(out), index

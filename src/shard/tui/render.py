"""RenderDescriptors (PROTOCOL §11) and conversation entries as rich ``Text``: diffs coloured, code,
path lists, trees, commands with exit code and duration. Pure: nothing from the wire is parsed as
markup (``Text`` takes it verbatim), and an unknown kind shows as JSON rather than breaking."""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console
from rich.text import Text

from shard.client.transcript import answer_note
from shard.protocol.render import (
    CodeRender,
    CommandRender,
    DiffRender,
    KvRender,
    PathListRender,
    ProgressRender,
    RenderDescriptor,
    StatusRender,
    TextRender,
    TreeNode,
    TreeRender,
)
from shard.tui.markdown import Reply
from shard.tui.view import ME, Entry, ToolCard

_TONES = {"info": "cyan", "warn": "yellow", "error": "bold red"}
_DIFF = {"+": "green", "-": "red"}
_ROLE = {"user": ("you ", "bold cyan"), "assistant": ("agent ", "bold green"), "thinking": ("… ", "dim")}
_ARGS_LIMIT = 200


def descriptor(render: RenderDescriptor) -> Text:
    out = Text()
    if isinstance(render, DiffRender):
        out.append(f"{render.path}\n", style="bold")
        if not render.hunks:  # a write that changed nothing
            out.append("no change\n", style="dim")
        for hunk in render.hunks:
            header = f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@\n"
            out.append(header, style="magenta")
            for line in hunk.lines:
                out.append(line + "\n", style=_DIFF.get(line[:1], ""))
    elif isinstance(render, CodeRender):
        if render.path or render.lang:
            out.append(f"{render.path or ''} {render.lang or ''}".strip() + "\n", style="bold")
        for number, line in enumerate(render.text.splitlines(), 1):
            out.append(f"{number:>4} ", style="dim")
            out.append(line + "\n")
    elif isinstance(render, PathListRender):
        for entry in render.paths:
            out.append(
                entry.path + ("/" if entry.kind == "dir" else ""), style="blue" if entry.kind == "dir" else ""
            )
            out.append(f"  {entry.hint}\n" if entry.hint else "\n", style="dim")
    elif isinstance(render, TreeRender):
        _tree(out, render.root, 0)
    elif isinstance(render, CommandRender):
        out.append(f"$ {render.command}\n", style="bold")
        out.append(_command_outcome(render.exitCode, render.durationMs))
    elif isinstance(render, KvRender):
        for pair in render.pairs:
            out.append(f"{pair.k}: ", style="bold")
            out.append(pair.v + "\n")
    elif isinstance(render, StatusRender):
        out.append(render.label + "\n", style=_TONES[render.tone])
    elif isinstance(render, ProgressRender):
        total = f" / {render.total:g}" if render.total is not None else ""
        out.append(f"{render.label}: {render.current:g}{total}\n")
    elif isinstance(render, TextRender):
        out.append(render.text + "\n")
    return out


def unified_diff(text: str) -> Text:
    """A unified diff given as text (a permission request's detail), coloured as a DiffRender."""
    out = Text()
    for number, line in enumerate(text.splitlines()):
        if number:
            out.append("\n")
        if line.startswith(("--- ", "+++ ")):
            out.append(line, style="bold")
        elif line.startswith("@@"):
            out.append(line, style="magenta")
        else:
            out.append(line, style=_DIFF.get(line[:1], ""))
    return out


def unknown(raw: Any) -> Text:
    """A descriptor of a kind this client does not know: its JSON (R11.0.13)."""
    return Text(json.dumps(raw, sort_keys=True, default=str) + "\n", style="dim")


def _tree(out: Text, node: TreeNode, depth: int) -> None:
    out.append("  " * depth + node.label + ("/" if node.kind == "dir" else "") + "\n")
    for child in node.children or []:
        _tree(out, child, depth + 1)


def _command_outcome(exit_code: int | None, duration_ms: float | None) -> Text:
    parts = []
    if exit_code is not None:
        parts.append(f"exit {exit_code}")
    if duration_ms is not None:
        parts.append(f"{duration_ms / 1000:.1f} s")
    style = "red" if exit_code not in (None, 0) else "dim"
    return Text(" · ".join(parts) + "\n", style=style) if parts else Text()


def card(tool: ToolCard, args_text: str = "") -> Text:
    """A tool card: name and arguments, how its permission request was answered and by whom, then
    the result's render (else the call's preview, else the result text), then exit code and
    duration."""
    out = Text()
    state = "error" if tool.is_error else ("done" if tool.done else "running")
    out.append(f"⚙ {tool.name} ", style="bold yellow")
    args = args_text or (json.dumps(tool.args, sort_keys=True, default=str) if tool.args else "")
    out.append(_clip(args), style="dim")
    out.append(f"  [{state}]\n", style="red" if tool.is_error else "dim")
    if tool.permission is not None:
        out.append(answer_note(tool.permission, mine=tool.answered_here, me=ME) + "\n", style="dim")
    shown = tool.render or tool.preview
    if shown is not None:
        out.append(descriptor(shown))
    elif tool.unknown is not None:
        out.append(unknown(tool.unknown))
    if shown is None and tool.result_text:
        out.append(_clip(tool.result_text, 1000) + "\n", style="red" if tool.is_error else "")
    if shown is None or not isinstance(shown, CommandRender):
        out.append(_command_outcome(tool.exit_code, tool.duration_ms))
    return out


def entry(item: Entry) -> Text | Reply:
    """An entry as the pane shows it: a reply as markdown, everything else as plain styled text."""
    if item.kind == "tool" and item.card is not None:
        return card(item.card, item.text if item.live else "")
    if item.kind == "assistant":
        prefix, style = _ROLE["assistant"]
        return Reply(Text(prefix, style=style), item.text + ("▌" if item.live else ""))
    if item.kind in _ROLE:
        prefix, style = _ROLE[item.kind]
        text = Text(prefix, style=style)
        text.append(item.text + ("▌" if item.live else ""), style="dim" if item.kind == "thinking" else "")
        return text
    return Text(item.text, style="bold red" if item.kind == "error" else "dim")


def plain(shown: Text | Reply, width: int) -> Text:
    """What an entry shows, as text laid out at ``width`` (a reply's markdown rendered, its
    markers gone); lines' trailing blanks trimmed."""
    if isinstance(shown, Text):
        return shown
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    lines = console.render_lines(shown, console.options, pad=False)
    return Text("\n".join("".join(s.text for s in line).rstrip() for line in lines))


def _clip(text: str, limit: int = _ARGS_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""Replies as markdown: headings, lists, bold, inline code, code blocks highlighted (rich's
``Markdown``, headings left-aligned, links shown with their address rather than as terminal
hyperlinks, so a link's text cannot hide where it points).

A reply streams by deltas and the pane redraws it on each frame, so it is rendered block by block:
the text is cut at blank lines outside code fences, and each block's lines are kept per (block,
width) — a frame renders only the block still being written; the blocks above it cost a lookup.
Rendering a whole 14 kB reply with eight highlighted code blocks takes ~0.5 s on a loaded two-core
machine, so re-rendering it on every delta is not an option (see docs/ARCHITECTURE.md for the
numbers). A finished reply is cut the same way, so it looks as it looked while streaming.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import Heading, Markdown
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_THEME = "monokai"
_CACHED_BLOCKS = 2048


def blocks(text: str) -> list[str]:
    """``text`` cut at blank lines outside code fences: pieces that are each markdown on their own."""
    out: list[str] = []
    current: list[str] = []
    fence: str | None = None  # the opening fence's run of ` or ~ while inside a code block
    for line in text.split("\n"):
        mark = _FENCE.match(line)
        if fence is None and mark is not None:
            fence = mark.group(1)
        elif fence is not None and mark is not None and _closes(fence, mark.group(1), line):
            fence = None
        elif fence is None and not line.strip():
            if current:
                out.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def _closes(fence: str, run: str, line: str) -> bool:
    """A closing fence: the opening's character, at least as long, nothing after it but spaces."""
    return run[0] == fence[0] and len(run) >= len(fence) and line.strip() == run


class _Heading(Heading):
    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = {}  # every level left-aligned (h1 is centred)


class _Markdown(Markdown):
    elements = {**Markdown.elements, "heading_open": _Heading}


@lru_cache(maxsize=_CACHED_BLOCKS)
def _block_lines(block: str, width: int, console: Console) -> list[list[Segment]]:
    options = console.options.update(width=width, highlight=False)
    markdown = _Markdown(block, code_theme=_CODE_THEME, hyperlinks=False)
    lines = console.render_lines(markdown, options, pad=False)
    while lines and not Segment.get_line_length(lines[0]):  # a list opens with an empty line
        del lines[0]
    return lines


def block_cache_info() -> Any:
    """Hits and misses of the rendered blocks' cache (a ``functools`` cache_info)."""
    return _block_lines.cache_info()


class Reply:
    """A rich renderable: ``label`` on the first line, the markdown ``text`` under a hanging
    indent of the label's width."""

    def __init__(self, label: Text, text: str) -> None:
        self.label = label
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        indent = self.label.cell_len
        width = max(options.max_width - indent, 8)
        lines: list[list[Segment]] = []
        for index, block in enumerate(blocks(self.text)):
            if index:
                lines.append([])
            lines.extend(_block_lines(block, width, console))
        pad = Segment(" " * indent)
        for index, line in enumerate(lines or [[]]):
            if index:
                yield pad
            else:
                yield from self.label.render(console)
            yield from line
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.label.cell_len + 1, options.max_width)

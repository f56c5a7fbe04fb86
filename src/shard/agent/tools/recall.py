"""``recall``: the exact original messages a compaction summarized (PROTOCOL §9.4 message_range).

The model names a compaction index (and a page); recall returns that compaction's span — every
message and tool result between the ends of its ``message_range`` — exactly as recorded, one JSON
message per line, paginated like read (50 KB a page). Nothing compacted is ever lost to the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from pydantic import Field

from shard.agent.session.window import MESSAGE_KINDS, entry_item
from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.protocol.content import TextContent
from shard.protocol.render import KeyValue, KvRender, RenderDescriptor

PAGE_BYTES = 50 * 1024

# Given a session id (None: this session), its entries; a fork's compaction can point at its source.
EntrySource = Callable[[str | None], list[dict[str, Any]]]


class RecallParams(ToolParams):
    index: int = Field(ge=1, description="Which compaction (1 is the first) to read back.")
    page: int = Field(default=1, ge=1, description="Page of the span to return (1 is the first).")


class RecallTool(Tool[RecallParams]):
    name = "recall"
    description = (
        "Read back, exactly, the messages that a compaction summarized. Give the compaction index "
        "(the summary names them) and a page; long spans come in pages of 50 KB."
    )
    params = RecallParams
    read_only = True

    def __init__(self, entries: EntrySource) -> None:
        self._entries = entries

    def start_render(self, args: RecallParams, ctx: ToolContext) -> RenderDescriptor:
        return KvRender(pairs=[KeyValue(k="index", v=str(args.index)), KeyValue(k="page", v=str(args.page))])

    async def execute(self, args: RecallParams, ctx: ToolContext) -> ToolOutput:
        lines = span_lines(self._entries, args.index)
        pages = paginate(lines)
        if args.page > len(pages):
            raise ToolFailure(
                f"compaction {args.index} has {len(pages)} page(s); there is no page {args.page}"
            )
        body = "\n".join(pages[args.page - 1])
        count = len(lines)
        note = f"[compaction {args.index}: {count} messages, page {args.page} of {len(pages)}"
        note += f"; call recall with page={args.page + 1} to continue]" if args.page < len(pages) else "]"
        return ToolOutput(content=TextContent(text=f"{note}\n{body}"))


def span_lines(entries: EntrySource, index: int) -> list[str]:
    """The span's messages, each as its exact JSON (as the live window carried it to the model)."""
    own = entries(None)
    compactions = [e for e in own if e["kind"] == "compaction"]
    target = next((e for e in compactions if e.get("index") == index), None)
    if target is None:
        known = ", ".join(str(e.get("index")) for e in compactions) or "none"
        raise ToolFailure(f"there is no compaction {index} (compactions: {known})")
    first, last = target["message_range"]
    source = own if target.get("sourceSessionId") is None else entries(target["sourceSessionId"])
    lines: list[str] = []
    inside = False
    for entry in source:
        if entry["id"] == first:
            inside = True
        if inside and entry["kind"] in MESSAGE_KINDS:
            lines.append(orjson.dumps(entry_item(entry, for_clients=False).message).decode())
        if entry["id"] == last:
            break
    if not lines:
        raise ToolFailure(f"the messages of compaction {index} are no longer in the session")
    return lines


def paginate(lines: list[str]) -> list[list[str]]:
    pages: list[list[str]] = [[]]
    size = 0
    for line in lines:
        if pages[-1] and size + len(line) > PAGE_BYTES:
            pages.append([])
            size = 0
        pages[-1].append(line)
        size += len(line) + 1
    return pages

"""``ls``: a directory's entries, directories marked with a trailing ``/``.

A symlink is followed only when it leads inside the working directory; one that leads outside is
listed as ``name@`` without a look at its target (the gate has not allowed anything out there).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.paths import display, locate, resolve
from shard.protocol.content import TextContent
from shard.protocol.render import KeyValue, KvRender, PathEntry, PathListRender, RenderDescriptor

MAX_ENTRIES = 500


class LsParams(ToolParams):
    path: str = Field(default=".", description="Directory to list (default: the working directory).")
    limit: int | None = Field(
        default=None, ge=1, description=f"Maximum entries to return (default {MAX_ENTRIES})."
    )


class LsTool(Tool[LsParams]):
    name = "ls"
    description = (
        "List a directory's entries (including dotfiles), sorted by name; directories end with '/', "
        f"links that lead outside the working directory with '@'. At most {MAX_ENTRIES} entries."
    )
    params = LsParams
    read_only = True

    def touched_paths(self, args: LsParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    def start_render(self, args: LsParams, ctx: ToolContext) -> RenderDescriptor:
        return KvRender(pairs=[KeyValue(k="path", v=display(ctx.cwd, resolve(ctx.cwd, args.path)))])

    async def execute(self, args: LsParams, ctx: ToolContext) -> ToolOutput:
        path = resolve(ctx.cwd, args.path)
        roots = [ctx.cwd] + ([ctx.spill_dir] if ctx.spill_dir else [])
        entries = await asyncio.to_thread(_list, path, display(ctx.cwd, path), roots)
        limit = min(args.limit or MAX_ENTRIES, MAX_ENTRIES)
        shown = entries[:limit]
        lines = [name + ("/" if is_dir else "@" if is_dir is None else "") for name, is_dir in shown]
        text = "\n".join(lines) if lines else "(empty directory)"
        if len(entries) > limit:
            text += f"\n\n[{len(entries) - limit} more entries not shown; {len(entries)} in all.]"
        base = display(ctx.cwd, path)
        render = PathListRender(
            paths=[
                PathEntry(
                    path=name if base == "." else f"{base.rstrip('/')}/{name}",
                    kind="dir" if is_dir else "file",
                )
                for name, is_dir in shown
            ]
        )
        return ToolOutput(content=TextContent(text=text), render=render)


def _list(path: Path, shown_path: str, roots: list[Path]) -> list[tuple[str, bool | None]]:
    """(name, is a directory?) for each entry; None for a link that leads outside the roots."""

    def kind(entry: os.DirEntry[str]) -> bool | None:
        if entry.is_symlink() and not locate(roots, Path(entry.path)).inside:
            return None
        return entry.is_dir()

    try:
        with os.scandir(path) as it:
            entries = [(e.name, kind(e)) for e in it]
    except FileNotFoundError:
        raise ToolFailure(f"{shown_path}: no such directory") from None
    except NotADirectoryError:
        raise ToolFailure(f"{shown_path} is a file, not a directory; use the read tool") from None
    except PermissionError:
        raise ToolFailure(f"{shown_path}: permission denied") from None
    entries.sort(key=lambda e: (e[0].lower(), e[0]))
    return entries

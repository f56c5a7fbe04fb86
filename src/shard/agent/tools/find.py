"""``find``: list files by glob (ripgrep, or the same in Python)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.paths import display, resolve
from shard.agent.tools.search import find_files
from shard.protocol.content import TextContent
from shard.protocol.render import KeyValue, KvRender, PathEntry, PathListRender, RenderDescriptor

MAX_PATHS = 1000


class FindParams(ToolParams):
    pattern: str | None = Field(
        default=None,
        description="Glob the files must match, e.g. '*.py' (any depth) or 'src/**/*.ts'; default all.",
    )
    path: str = Field(default=".", description="Directory to search; default the working directory.")
    limit: int | None = Field(default=None, ge=1, description=f"Maximum paths (default {MAX_PATHS}).")


class FindTool(Tool[FindParams]):
    name = "find"
    description = (
        f"List files by glob, in path order, up to {MAX_PATHS}. Files ignored by .gitignore are "
        "skipped; hidden files are included."
    )
    params = FindParams
    read_only = True

    def touched_paths(self, args: FindParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    def start_render(self, args: FindParams, ctx: ToolContext) -> RenderDescriptor:
        return KvRender(pairs=[KeyValue(k="pattern", v=args.pattern or "*"), KeyValue(k="path", v=args.path)])

    async def execute(self, args: FindParams, ctx: ToolContext) -> ToolOutput:
        root = resolve(ctx.cwd, args.path)
        if not root.is_dir():
            raise ToolFailure(f"{display(ctx.cwd, root)} is not a directory")
        limit = min(args.limit or MAX_PATHS, MAX_PATHS)
        found = await find_files(root, args.pattern, limit + 1)
        more = len(found) > limit
        found = found[:limit]
        base = display(ctx.cwd, root)
        paths = [rel if base == "." else f"{base.rstrip('/')}/{rel}" for rel in found]
        text = "\n".join(paths) if paths else "No files found."
        if more:
            text += f"\n\n[More than {limit} files; narrow the pattern or path.]"
        render = PathListRender(paths=[PathEntry(path=p, kind="file") for p in paths])
        return ToolOutput(content=TextContent(text=text), render=render)

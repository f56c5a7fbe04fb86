"""``grep``: search file contents with a regular expression (ripgrep, or the same in Python)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.paths import display, resolve
from shard.agent.tools.search import MAX_LINE_CHARS, grep_files
from shard.protocol.content import TextContent
from shard.protocol.render import KeyValue, KvRender, PathEntry, PathListRender, RenderDescriptor

MAX_MATCHES = 100


class GrepParams(ToolParams):
    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(
        default=".", description="Directory (or file) to search; default the working directory."
    )
    glob: str | None = Field(default=None, description="Only files matching this glob, e.g. '*.py'.")
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    literal: bool = Field(default=False, description="Treat pattern as plain text, not a regex.")
    limit: int | None = Field(default=None, ge=1, description=f"Maximum matches (default {MAX_MATCHES}).")


class GrepTool(Tool[GrepParams]):
    name = "grep"
    description = (
        f"Search file contents for a regular expression. Returns up to {MAX_MATCHES} matches as "
        f"path:line: text (lines cut at {MAX_LINE_CHARS} characters), in path order; files ignored by "
        ".gitignore and binary files are skipped."
    )
    params = GrepParams
    read_only = True

    def touched_paths(self, args: GrepParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    def start_render(self, args: GrepParams, ctx: ToolContext) -> RenderDescriptor:
        pairs = [KeyValue(k="pattern", v=args.pattern), KeyValue(k="path", v=args.path)]
        if args.glob:
            pairs.append(KeyValue(k="glob", v=args.glob))
        return KvRender(pairs=pairs)

    async def execute(self, args: GrepParams, ctx: ToolContext) -> ToolOutput:
        root = resolve(ctx.cwd, args.path)
        single = None
        if root.is_file():  # one file, named: searched even if ignore rules would skip it
            single, root = root.name, root.parent
        elif not root.is_dir():
            raise ToolFailure(f"{display(ctx.cwd, root)}: no such file or directory")
        limit = min(args.limit or MAX_MATCHES, MAX_MATCHES)
        matches = await grep_files(
            root,
            args.pattern,
            glob=args.glob,
            ignore_case=args.ignore_case,
            literal=args.literal,
            limit=limit + 1,
            single_file=single,
        )
        more = len(matches) > limit
        matches = matches[:limit]
        base = display(ctx.cwd, root)

        def shown(rel: str) -> str:
            return rel if base == "." else f"{base.rstrip('/')}/{rel}"

        lines = [f"{shown(m.path)}:{m.line}: {m.text}" for m in matches]
        text = "\n".join(lines) if lines else "No matches."
        if more:
            text += f"\n\n[More than {limit} matches; narrow the pattern, path or glob.]"
        render = PathListRender(
            paths=[PathEntry(path=f"{shown(m.path)}:{m.line}", kind="file", hint=m.text) for m in matches]
        )
        return ToolOutput(content=TextContent(text=text), render=render)

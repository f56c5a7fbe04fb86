"""``read``: a text file's lines, with offset/limit and truncation at 2000 lines or 50 KB."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.paths import display, resolve
from shard.protocol.content import TextContent
from shard.protocol.render import CodeRender, KeyValue, KvRender, RenderDescriptor

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
_SNIFF = 8192

_LANGS = {
    ".py": "python", ".js": "javascript", ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx",
    ".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".md": "markdown",
    ".rs": "rust", ".go": "go", ".c": "c", ".h": "c", ".cpp": "cpp", ".java": "java",
    ".sh": "bash", ".html": "html", ".css": "css", ".sql": "sql", ".rb": "ruby",
}  # fmt: skip


class ReadParams(ToolParams):
    path: str = Field(description="File to read, relative to the working directory or absolute.")
    offset: int | None = Field(
        default=None, ge=1, description="1-based line number to start from (default 1)."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"Maximum number of lines to return (default {MAX_LINES})."
    )


class ReadTool(Tool[ReadParams]):
    name = "read"
    description = (
        f"Read a text file. Returns at most {MAX_LINES} lines or {MAX_BYTES // 1024} KB; when the file "
        "is longer the result ends with the offset to continue from."
    )
    params = ReadParams
    read_only = True

    def touched_paths(self, args: ReadParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    def start_render(self, args: ReadParams, ctx: ToolContext) -> RenderDescriptor:
        pairs = [KeyValue(k="path", v=display(ctx.cwd, resolve(ctx.cwd, args.path)))]
        if args.offset:
            pairs.append(KeyValue(k="offset", v=str(args.offset)))
        if args.limit:
            pairs.append(KeyValue(k="limit", v=str(args.limit)))
        return KvRender(pairs=pairs)

    async def execute(self, args: ReadParams, ctx: ToolContext) -> ToolOutput:
        path = resolve(ctx.cwd, args.path)
        text, shown = await asyncio.to_thread(_read, path, display(ctx.cwd, path), args)
        lang = _LANGS.get(path.suffix.lower())
        render = CodeRender(path=display(ctx.cwd, path), text=shown)
        if lang:
            render.lang = lang
        return ToolOutput(content=TextContent(text=text), render=render)


def _read(path: Path, shown_path: str, args: ReadParams) -> tuple[str, str]:
    """Return (text for the model, body for the render)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ToolFailure(f"{shown_path}: no such file") from None
    except OSError as exc:
        raise ToolFailure(f"{shown_path}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailure(f"{shown_path} is a directory; use the ls tool to list it")
    if not stat.S_ISREG(st.st_mode):
        raise ToolFailure(f"{shown_path} is not a regular file")
    try:
        with open(path, "rb") as f:
            head = f.read(_SNIFF)
            if b"\0" in head:
                raise ToolFailure(f"{shown_path} is a binary file ({st.st_size} bytes); read shows text only")
            data = head + f.read()
    except PermissionError:
        raise ToolFailure(f"{shown_path}: permission denied") from None
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    total = len(lines)
    start = (args.offset or 1) - 1
    if start >= max(total, 1) and not (start == 0 and total == 0):
        raise ToolFailure(f"offset {start + 1} is past the end of {shown_path} ({total} lines)")
    limit = min(args.limit or MAX_LINES, MAX_LINES)
    out: list[str] = []
    size = 0
    for line in lines[start : start + limit]:
        encoded = len(line.encode("utf-8"))
        if out and size + encoded > MAX_BYTES:
            break
        out.append(line)
        size += encoded
    body = "".join(out)
    end = start + len(out)
    if end < total:
        why = "size limit" if len(out) < limit else "line limit"
        note = f"\n\n[Showing lines {start + 1}-{end} of {total} ({why}). Use offset={end + 1} to continue.]"
        return body + note, body
    return body, body

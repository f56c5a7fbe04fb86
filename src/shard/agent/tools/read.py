"""``read``: a text file's lines, with offset/limit and truncation at 2000 lines or 50 KB."""

from __future__ import annotations

import asyncio
import base64
import stat
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.images import too_large
from shard.agent.tools.paths import display, resolve
from shard.protocol.content import Image, TextContent
from shard.protocol.render import CodeRender, KeyValue, KvRender, RenderDescriptor

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
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
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is not None:
            return await asyncio.to_thread(_image, path, display(ctx.cwd, path), mime)
        text, shown = await asyncio.to_thread(_read, path, display(ctx.cwd, path), args)
        lang = _LANGS.get(path.suffix.lower())
        render = CodeRender(path=display(ctx.cwd, path), text=shown)
        if lang:
            render.lang = lang
        return ToolOutput(content=TextContent(text=text), render=render)


def _image(path: Path, shown: str, mime: str) -> ToolOutput:
    """An image file, handed to the model as a picture (checked by its magic bytes, size-capped)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolFailure(f"{shown}: no such file") from None
    except OSError as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    refusal = too_large(shown, len(data))
    if refusal is not None:
        raise ToolFailure(refusal)
    actual = _sniff_image(data)
    if actual is None:
        raise ToolFailure(f"{shown} does not look like a {mime} image")
    text = f"Image {shown} ({actual}, {len(data)} bytes), attached for you to see."
    image = Image(data=base64.b64encode(data).decode("ascii"), mime_type=actual)
    return ToolOutput(content=TextContent(text=text), images=[image])


def _sniff_image(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


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
            f.seek(0)
            return _window(f, shown_path, args)
    except PermissionError:
        raise ToolFailure(f"{shown_path}: permission denied") from None


def _window(f: BinaryIO, shown_path: str, args: ReadParams) -> tuple[str, str]:
    """Stream the file: keep the requested lines within the caps, count the rest without keeping it.

    Lines are LF-terminated only, as grep -n and editors number them (never str.splitlines, which
    also breaks at form feeds, U+2028 and friends).
    """
    start = (args.offset or 1) - 1
    limit = min(args.limit or MAX_LINES, MAX_LINES)
    out: list[bytes] = []
    size = 0
    total = 0
    cut_line: int | None = None  # a single line longer than the byte cap, shown cut
    stopped = False
    for raw in f:  # binary iteration splits on b"\n" only
        total += 1
        if total <= start or stopped:
            continue
        if len(out) >= limit:
            stopped = True
            continue
        if size + len(raw) > MAX_BYTES:
            if not out:
                out.append(_cut_utf8(raw, MAX_BYTES))
                cut_line = total
            stopped = True
            continue
        out.append(raw)
        size += len(raw)
    if start > 0 and start >= total:
        raise ToolFailure(f"offset {start + 1} is past the end of {shown_path} ({total} lines)")
    body = b"".join(out).decode("utf-8", errors="replace")
    end = start + len(out)
    if cut_line is not None:
        note = (
            f"\n\n[Line {cut_line} is longer than {MAX_BYTES // 1024} KB; only its start is shown. "
            f"The file has {total} lines."
            + (f" Use offset={end + 1} to continue with the next line.]" if end < total else "]")
        )
        return body + note, body
    if end < total:
        why = "size limit" if len(out) < limit else "line limit"
        note = f"\n\n[Showing lines {start + 1}-{end} of {total} ({why}). Use offset={end + 1} to continue.]"
        return body + note, body
    return body, body


def _cut_utf8(raw: bytes, size: int) -> bytes:
    cut = raw[:size]
    return cut.decode("utf-8", errors="ignore").encode("utf-8")

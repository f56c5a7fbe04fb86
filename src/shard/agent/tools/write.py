"""``write``: create or replace a whole file, atomically, creating parent folders."""

from __future__ import annotations

import asyncio
import contextlib
import stat
from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.agent.tools.diff import diff_render, unified_text
from shard.agent.tools.files import BOM, load_text, write_atomic
from shard.agent.tools.paths import display, resolve
from shard.protocol.content import TextContent
from shard.protocol.permissions import PermissionDetail
from shard.protocol.render import RenderDescriptor


class WriteParams(ToolParams):
    path: str = Field(description="File to write, relative to the working directory or absolute.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(Tool[WriteParams]):
    name = "write"
    description = (
        "Create a file or replace its whole content. Parent folders are created. Prefer edit for "
        "changing part of an existing file."
    )
    params = WriteParams
    read_only = False

    def touched_paths(self, args: WriteParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    def preview(self, args: WriteParams, ctx: ToolContext) -> tuple[str, str]:
        """(old text, new text) — what the permission request and renders show."""
        path = resolve(ctx.cwd, args.path)
        try:
            old = load_text(path, display(ctx.cwd, path)).text.replace("\r\n", "\n")
        except ToolFailure:
            old = ""
        return old, args.content

    def describe(self, args: WriteParams, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        path = resolve(ctx.cwd, args.path)
        shown = display(ctx.cwd, path)
        old, new = self.preview(args, ctx)
        if path.is_file() and old == new:  # still asked (it is a write), but nobody reads an empty diff
            return f"Write {shown} (no change: it already holds this content)?", [
                PermissionDetail(label="path", value=shown, format="path"),
                PermissionDetail(label="diff", value="no change", format="text"),
            ]
        verb = "Replace" if path.exists() else "Create"
        lines = new.count("\n") + (0 if new.endswith("\n") or not new else 1)
        return f"{verb} {shown} ({lines} lines)?", [
            PermissionDetail(label="path", value=shown, format="path"),
            PermissionDetail(label="diff", value=unified_text(shown, old, new), format="code"),
        ]

    def describe_outside(self, args: WriteParams, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        shown = display(ctx.cwd, resolve(ctx.cwd, args.path))
        new = args.content
        lines = new.count("\n") + (0 if new.endswith("\n") or not new else 1)
        return f"Write {shown} ({lines} lines)?", [
            PermissionDetail(label="path", value=shown, format="path"),
            PermissionDetail(label="content", value=new, format="code"),
        ]

    def start_render(self, args: WriteParams, ctx: ToolContext) -> RenderDescriptor:
        old, new = self.preview(args, ctx)
        return diff_render(display(ctx.cwd, resolve(ctx.cwd, args.path)), old, new)

    async def execute(self, args: WriteParams, ctx: ToolContext) -> ToolOutput:
        path = resolve(ctx.cwd, args.path)
        shown = display(ctx.cwd, path)
        return await asyncio.to_thread(_write, path, shown, args.content)


def _write(path: Path, shown: str, content: str) -> ToolOutput:
    if path.is_dir():
        raise ToolFailure(f"{shown} is a directory")
    existed = path.exists()
    old, mode, data, raw = "", None, content.encode("utf-8"), None
    if existed:
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(path.stat().st_mode)  # kept even when the old content is not text
        try:
            current = load_text(path, shown)
        except ToolFailure:
            current = None
        if current is not None:
            old, raw = current.text, path.read_bytes()
            # an existing file keeps its BOM and CRLF line endings
            if current.newline == "\r\n" and "\r\n" not in content:
                data = content.replace("\n", "\r\n").encode("utf-8")
            if current.bom:
                data = BOM + data
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    if raw == data:  # not rewritten: its bytes and modification time stay as they are
        text = f"No change: {shown} already holds this content ({lines} lines)."
        return ToolOutput(content=TextContent(text=text), render=diff_render(shown, old, old))
    try:
        write_atomic(path, data, mode)
    except OSError as exc:
        raise ToolFailure(f"cannot write {shown}: {exc.strerror}") from None
    verb = "Replaced" if existed else "Created"
    text = f"{verb} {shown} ({lines} lines, {len(data)} bytes)."
    return ToolOutput(
        content=TextContent(text=text), render=diff_render(shown, old.replace("\r\n", "\n"), content)
    )

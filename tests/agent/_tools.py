"""Tools the agent's in-process tests share."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolOutput, ToolParams
from shard.agent.tools.paths import resolve
from shard.protocol.content import TextContent


class WriteParams(ToolParams):
    path: str = Field(description="File to write.")
    text: str = ""


class WriteTool(Tool[WriteParams]):
    """A mutating tool, as a project would add one; it writes for real."""

    name = "write"
    description = "Write a file."
    params = WriteParams
    read_only = False

    def touched_paths(self, args: WriteParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    async def execute(self, args: WriteParams, ctx: ToolContext) -> ToolOutput:
        resolve(ctx.cwd, args.path).write_text(args.text)
        return ToolOutput(content=TextContent(text="ok"))

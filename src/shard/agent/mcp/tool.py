"""An MCP server's tool as a Shard :class:`~shard.agent.tools.base.Tool`: described to the model from the
server's own schema, gated like any tool (mutating unless the server marks it ``readOnlyHint``), and
run by the ``invoke`` the host gives it (:mod:`shard.agent.mcp.host`).

:func:`output` turns a ``tools/call`` result into what the model reads. It reads the result's fields
by name, so this module does not import the SDK. Its images share the ``read`` tool's cap
(:mod:`shard.agent.tools.images`), counted over the whole result: an image that would take it over
becomes a line saying so, with its size and the cap.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from pydantic import ConfigDict

from shard.agent.providers.base import ToolSpec
from shard.agent.tools.base import Tool, ToolContext, ToolOutput, ToolParams
from shard.agent.tools.images import base64_size, too_large
from shard.protocol.content import ErrorContent, Image, TextContent
from shard.protocol.permissions import PermissionDetail

MAX_RESULT_CHARS = 100_000  # of text handed to the model from one call; the rest is cut, and said so

Invoke = Callable[[str, dict[str, Any]], Awaitable[ToolOutput]]


class McpArgs(ToolParams):
    """Any arguments: the server validates them against its own schema and says what is wrong."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpArgs]):
    params = McpArgs
    server: str
    remote: str  # the tool's name on its server

    def __init__(self, server: str, remote: str, schema: dict[str, Any], invoke: Invoke) -> None:
        self.server = server
        self.remote = remote
        self._schema = schema
        self._invoke = invoke

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self._schema)

    def describe(self, args: McpArgs, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        prompt = f"Allow the MCP tool {self.remote!r} of server {self.server!r}?"
        value = orjson.dumps(args.model_dump(), option=orjson.OPT_INDENT_2).decode()
        return prompt, [
            PermissionDetail(label="MCP server", value=self.server, format="text"),
            PermissionDetail(label="input", value=value, format="code"),
        ]

    def describe_outside(self, args: McpArgs, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        return self.describe(args, ctx)

    async def execute(self, args: McpArgs, ctx: ToolContext) -> ToolOutput:
        return await self._invoke(self.remote, args.model_dump())


def make_tool(
    name: str,
    server: str,
    remote: str,
    description: str,
    schema: dict[str, Any],
    read_only: bool,
    invoke: Invoke,
) -> McpTool:
    """A tool named ``name`` for the model (``name``, ``description`` and ``read_only`` are class
    attributes of a Tool, so each MCP tool gets its own small subclass)."""
    described = description.strip() or f"The {remote!r} tool."
    attrs = {"name": name, "description": f"{described}\n\n(MCP server {server!r})", "read_only": read_only}
    cls: type[McpTool] = type(f"McpTool_{name}", (McpTool,), attrs)
    return cls(server, remote, _object_schema(schema), invoke)


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Providers want an object schema for parameters; a server's title adds nothing for the model."""
    out = {k: v for k, v in schema.items() if k != "title"}
    out.setdefault("type", "object")
    if out["type"] == "object":
        out.setdefault("properties", {})
    return out


def output(result: Any) -> ToolOutput:
    """What the model reads of a ``CallToolResult``: its text, images as images, other blocks named."""
    parts: list[str] = []
    images: list[Image] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            before = sum(base64_size(i.data) for i in images)
            refusal = too_large("the MCP tool's image", base64_size(block.data), before)
            if refusal is None:
                images.append(Image(data=block.data, mime_type=block.mime_type))
            else:
                parts.append(f"[{refusal}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[resource {resource.uri} ({resource.mime_type})]")
        elif kind == "resource_link":
            parts.append(f"[resource link {block.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content left out]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(orjson.dumps(structured, option=orjson.OPT_INDENT_2).decode())
    text = "\n".join(parts) if parts else ("(no output)" if not images else "")
    if len(text) > MAX_RESULT_CHARS:
        cut = len(text) - MAX_RESULT_CHARS
        text = f"{text[:MAX_RESULT_CHARS]}\n[… {cut} more characters of the MCP tool's output left out]"
    if getattr(result, "is_error", False):
        return ToolOutput(ErrorContent(message=text or "the MCP tool reported an error"), is_error=True)
    return ToolOutput(TextContent(text=text), images=images or None)

"""An MCP tool as a Shard tool: its spec from the server's schema, the gate's decisions on it, and
what the model reads of a ``tools/call`` result. The SDK's result types are imported by the tests that
build them, not at the top: ``mcp`` is ~0.6 CPU-s, which every xdist worker collecting the suite
would pay for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shard.agent.mcp.tool import MAX_RESULT_CHARS, McpTool, make_tool, output
from shard.agent.modes import BUILTIN_MODES
from shard.agent.permissions.gate import Allow, Ask, Deny, Standing, decide
from shard.agent.permissions.grants import exact_rule
from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.tools.base import ToolContext, ToolOutput

BUILD, PLAN = BUILTIN_MODES
SCHEMA = {"type": "object", "title": "shoutArguments", "properties": {"text": {"type": "string"}}}


async def _never(remote: str, args: dict[str, Any]) -> ToolOutput:
    raise AssertionError("not called")


def _tool(read_only: bool = False) -> McpTool:
    return make_tool("demo__shout", "demo", "shout", "Say it louder.", SCHEMA, read_only, _never)


def _decide(tool: McpTool, args: dict[str, Any], mode=BUILD, grants=()) -> Any:
    standing = Standing(
        mode=mode, grants=list(grants), allowances=None, answerable=True, headless=HeadlessPolicy()
    )
    return decide(tool, tool.parse(args), args, ToolContext(cwd=Path("/nowhere")), standing)


def test_the_spec_is_the_servers_schema_under_the_mangled_name():
    spec = _tool().spec()
    assert spec.name == "demo__shout"
    assert spec.parameters == {"type": "object", "properties": {"text": {"type": "string"}}}
    assert spec.description.startswith("Say it louder.")
    assert "MCP server 'demo'" in spec.description


def test_any_arguments_pass_through_to_the_server():
    args = {"text": "hi", "extra": [1, 2]}
    assert _tool().parse(args).model_dump() == args


def test_a_mutating_mcp_tool_asks_and_shows_what_it_is():
    decision = _decide(_tool(), {"text": "hi"})
    assert isinstance(decision, Ask)
    request = decision.request
    assert request.tool_name == "demo__shout"
    assert request.prompt == "Allow the MCP tool 'shout' of server 'demo'?"
    assert {d.label: d.value for d in request.details}["MCP server"] == "demo"


def test_a_read_only_mcp_tool_runs_without_asking_but_plan_mode_refuses_a_mutating_one():
    assert isinstance(_decide(_tool(read_only=True), {"text": "hi"}), Allow)
    assert isinstance(_decide(_tool(read_only=True), {"text": "hi"}, mode=PLAN), Allow)
    refused = _decide(_tool(), {"text": "hi"}, mode=PLAN)
    assert isinstance(refused, Deny)
    assert "plan mode" in refused.reason


def test_an_exact_grant_allows_the_same_call_only():
    grant = exact_rule("demo__shout", {"text": "hi"})
    assert isinstance(_decide(_tool(), {"text": "hi"}, grants=[grant]), Allow)
    assert isinstance(_decide(_tool(), {"text": "other"}, grants=[grant]), Ask)


def test_text_and_images_reach_the_model():
    from mcp.types import (
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    result = CallToolResult(
        content=[
            TextContent(type="text", text="one"),
            ImageContent(type="image", data="aGk=", mime_type="image/png"),
            EmbeddedResource(
                type="resource", resource=TextResourceContents(uri="file:///a.txt", text="inside")
            ),
            ResourceLink(type="resource_link", uri="file:///b.txt", name="b"),
        ]
    )
    out = output(result)
    assert out.is_error is False
    assert out.content.to_wire() == {"kind": "text", "text": "one\ninside\n[resource link file:///b.txt]"}
    assert [i.mime_type for i in out.images or []] == ["image/png"]


def test_an_error_result_is_a_tool_error_and_structured_content_is_shown_when_there_is_no_text():
    from mcp.types import CallToolResult, TextContent

    failed = output(CallToolResult(content=[TextContent(type="text", text="no such page")], is_error=True))
    assert failed.is_error is True
    assert failed.content.to_wire() == {"kind": "error", "message": "no such page"}
    structured = output(CallToolResult(content=[], structured_content={"n": 3}))
    assert structured.content.to_wire()["text"] == '{\n  "n": 3\n}'
    assert output(CallToolResult(content=[])).content.to_wire()["text"] == "(no output)"


def test_a_huge_result_is_cut_and_says_so():
    from mcp.types import CallToolResult, TextContent

    out = output(CallToolResult(content=[TextContent(type="text", text="x" * (MAX_RESULT_CHARS + 10))]))
    text = out.content.to_wire()["text"]
    assert text.startswith("x" * MAX_RESULT_CHARS)
    assert text.endswith("[… 10 more characters of the MCP tool's output left out]")

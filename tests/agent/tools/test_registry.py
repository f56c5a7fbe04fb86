"""The tool registry: the built-ins, the allow-list, extensions, and a tool's spec."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent._tools import WriteTool
from shard.agent.tools.base import ToolContext
from shard.agent.tools.registry import build_tools
from shard.protocol.content import TextContent
from shard.protocol.errors import ErrorCode, ShardError

_EXT_SOURCE = """
from shard.agent.tools.base import Tool, ToolOutput, ToolParams
from shard.protocol.content import TextContent


class EchoParams(ToolParams):
    text: str


class EchoTool(Tool[EchoParams]):
    name = "echo"
    description = "Echo the text."
    params = EchoParams
    read_only = True

    async def execute(self, args, ctx):
        return ToolOutput(content=TextContent(text=args.text))


class ShadowRead(EchoTool):
    name = "read"


INSTANCE = EchoTool()
NOT_A_TOOL = object()
"""


@pytest.fixture
def ext_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    name = f"shard_test_ext_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(_EXT_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_built_in_tools_and_their_read_only_flags() -> None:
    """Covers: R9.4.11, R9.4.12. read, grep, find and ls are read-only; write, edit and bash are not."""
    tools = build_tools()
    assert list(tools) == ["read", "write", "edit", "bash", "grep", "find", "ls"]
    assert {n: t.read_only for n, t in tools.items()} == {
        "read": True,
        "write": False,
        "edit": False,
        "bash": False,
        "grep": True,
        "find": True,
        "ls": True,
    }


def test_allow_list_narrows_the_set() -> None:
    """Checks the allow-list: only named tools remain; an empty list leaves none."""
    assert list(build_tools(allow=["ls", "bash", "nope"])) == ["bash", "ls"]
    assert build_tools(allow=[]) == {}


@pytest.mark.parametrize("attr", ["EchoTool", "INSTANCE"])
async def test_extension_tools_load_from_module_attr(ext_module: str, attr: str, tmp_path: Path) -> None:
    """Checks "module:attr" extensions: a Tool subclass or instance joins the built-ins and runs."""
    tools = build_tools((f"{ext_module}:{attr}",))
    assert sorted(tools) == sorted([*build_tools(), "echo"])
    echo = tools["echo"]
    out = await echo.execute(echo.parse({"text": "hi"}), ToolContext(cwd=tmp_path))
    assert out.content == TextContent(text="hi")
    assert sorted(build_tools((f"{ext_module}:{attr}",), allow=["echo"])) == ["echo"]


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("{mod}:NOT_A_TOOL", "is not a Tool"),
        ("{mod}:Missing", "tool extension"),
        ("shard_no_such_module_xyz:Tool", "tool extension"),
        ("{mod}:ShadowRead", "two tools are named 'read'"),
    ],
)
def test_bad_extensions_are_invalid_requests(ext_module: str, spec: str, why: str) -> None:
    """Checks that a non-Tool, a missing attribute or module, or a name clash is INVALID_REQUEST."""
    with pytest.raises(ShardError) as info:
        build_tools((spec.format(mod=ext_module),))
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert why in info.value.message


def test_tool_spec_comes_from_the_params_model() -> None:
    """Checks Tool.spec(): the params model's JSON schema without its title, closed to extras."""
    spec = WriteTool().spec()
    assert spec.name == "write"
    assert spec.description == "Write a file."
    assert "title" not in spec.parameters
    assert spec.parameters["required"] == ["path"]
    assert spec.parameters["additionalProperties"] is False
    assert spec.parameters["properties"]["path"]["description"] == "File to write."

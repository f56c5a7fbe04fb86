"""The permission gate, the mode registry and the tool registry."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from pydantic import Field

from shard.agent.modes import BUILTIN_MODES, BuildPolicy, Mode, ModeController, PlanPolicy
from shard.agent.permissions.gate import build_request, outside_paths, precheck
from shard.agent.tools.base import Tool, ToolContext, ToolOutput, ToolParams
from shard.agent.tools.ls import LsTool
from shard.agent.tools.paths import display, is_inside, resolve
from shard.agent.tools.read import ReadTool
from shard.agent.tools.registry import build_tools
from shard.protocol.content import TextContent
from shard.protocol.errors import ErrorCode, ShardError


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


BUILD, PLAN = BUILTIN_MODES


class NoLsPolicy:
    def refuse(self, tool_name: str, read_only: bool) -> str | None:
        return "ls is off in review mode" if tool_name == "ls" else None


REVIEW = Mode("review", "Review only: no listing.", NoLsPolicy())


class _NeedsApproval:
    """What precheck's None means here: not allowed without asking, no refusal of its own."""

    allowed = False
    reason = None


async def gate(tool: Tool, args: dict[str, object], cwd: Path, mode: Mode = BUILD):
    verdict = precheck(tool, tool.parse(args), ToolContext(cwd=cwd), mode)
    return _NeedsApproval() if verdict is None else verdict


# --- the gate ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [BUILD, PLAN])
async def test_read_only_tools_inside_the_cwd_run_without_asking(tmp_path: Path, mode: Mode) -> None:
    """Checks that read and ls on paths inside the cwd are allowed in both built-in modes."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    for tool, args in [
        (ReadTool(), {"path": "src/a.py"}),
        (ReadTool(), {"path": str(tmp_path / "src" / "a.py")}),
        (LsTool(), {}),
        (LsTool(), {"path": "src"}),
        (ReadTool(), {"path": "not/yet/there.txt"}),
    ]:
        decision = await gate(tool, args, tmp_path, mode)
        assert decision.allowed, (tool.name, args)
        assert decision.reason is None


@pytest.mark.parametrize("raw", ["../secret.txt", "sub/../../secret.txt", "{outside}"])
async def test_read_only_tool_outside_the_cwd_needs_approval(tmp_path: Path, raw: str) -> None:
    """Checks that a read-only tool reaching outside the cwd does not run without approval, and
    that the request built for it names the outside path."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    raw = raw.format(outside=tmp_path / "secret.txt")

    decision = await gate(ReadTool(), {"path": raw}, cwd)

    assert not decision.allowed
    assert decision.reason is None, "not refused: it needs asking"
    tool, ctx = ReadTool(), ToolContext(cwd=cwd)
    args = tool.parse({"path": raw})
    assert [o.target for o in outside_paths(tool, args, ctx)] == [tmp_path / "secret.txt"]
    request = build_request(tool, args, {"path": raw}, ctx, outside_paths(tool, args, ctx))
    assert "outside the working directory" in request.prompt
    assert str(tmp_path / "secret.txt") in request.prompt


async def test_a_symlink_cannot_smuggle_a_path_outside(tmp_path: Path) -> None:
    """Checks symlink-aware containment: a link inside the cwd pointing outside is denied, a link
    pointing inside is allowed."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (cwd / "inner.txt").write_text("i")
    os.symlink(tmp_path / "secret.txt", cwd / "escape")
    os.symlink(cwd / "inner.txt", cwd / "alias")
    os.symlink(tmp_path, cwd / "up")

    assert not (await gate(ReadTool(), {"path": "escape"}, cwd)).allowed
    assert not (await gate(LsTool(), {"path": "up"}, cwd)).allowed
    assert (await gate(ReadTool(), {"path": "alias"}, cwd)).allowed


async def test_a_sibling_sharing_the_cwd_prefix_is_outside(tmp_path: Path) -> None:
    """Checks that /x/proj2 is not inside /x/proj (containment is by path component)."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "proj2").mkdir()
    decision = await gate(LsTool(), {"path": str(tmp_path / "proj2")}, cwd)
    assert not decision.allowed


async def test_cwd_reached_through_a_symlink_is_still_inside(tmp_path: Path) -> None:
    """Checks that containment compares real paths on both sides: a cwd given via a link works."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("")
    os.symlink(tmp_path / "real", tmp_path / "via")
    assert (await gate(ReadTool(), {"path": "f.txt"}, tmp_path / "via")).allowed


async def test_plan_mode_refuses_a_mutating_tool(tmp_path: Path) -> None:
    """Checks that plan mode refuses a non-read-only tool with the plan-mode explanation, even for
    a path inside the cwd, and the tool does not run."""
    decision = await gate(WriteTool(), {"path": "new.txt", "text": "x"}, tmp_path, PLAN)
    assert not decision.allowed
    assert decision.reason is not None
    assert "plan mode" in decision.reason
    assert "'write'" in decision.reason
    assert not (tmp_path / "new.txt").exists()


async def test_build_mode_mutating_tool_needs_approval(tmp_path: Path) -> None:
    """Checks that in build mode a mutating tool inside the cwd is neither run nor refused: it
    needs approval."""
    decision = await gate(WriteTool(), {"path": "new.txt"}, tmp_path, BUILD)
    assert not decision.allowed
    assert decision.reason is None


async def test_the_mode_policy_is_asked_before_the_path_check(tmp_path: Path) -> None:
    """Checks the order: in plan mode a mutating tool outside the cwd gets the mode's refusal, not
    the outside-the-cwd message."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    decision = await gate(WriteTool(), {"path": "../out.txt"}, cwd, PLAN)
    assert decision.reason is not None
    assert "plan mode" in decision.reason
    assert "outside" not in decision.reason


async def test_an_extension_mode_policy_is_consulted_like_a_built_in(tmp_path: Path) -> None:
    """Checks that a registered extension mode's refusal becomes the gate's reason verbatim."""
    decision = await gate(LsTool(), {}, tmp_path, REVIEW)
    assert decision.allowed is False
    assert decision.reason == "ls is off in review mode"
    assert (await gate(ReadTool(), {"path": "x"}, tmp_path, REVIEW)).allowed


def test_policies_answer_per_read_only_flag() -> None:
    """Checks the built-in policies directly: build refuses nothing, plan refuses only mutating."""
    assert BuildPolicy().refuse("bash", False) is None
    assert PlanPolicy().refuse("read", True) is None
    assert PlanPolicy().refuse("bash", False) is not None


def test_path_helpers(tmp_path: Path) -> None:
    """Checks resolve (relative to cwd, normalized, ~ expanded), is_inside and display."""
    home = Path(os.path.expanduser("~"))
    assert resolve(tmp_path, "a/./b/../c") == tmp_path / "a" / "c"
    assert resolve(tmp_path, "/etc//hosts") == Path("/etc/hosts")
    assert resolve(tmp_path, "~/x") == home / "x"
    assert is_inside(tmp_path, tmp_path)
    assert is_inside(tmp_path, tmp_path / "deep" / "er")
    assert not is_inside(tmp_path, tmp_path.parent)
    assert not is_inside(tmp_path, Path("/"))
    assert display(tmp_path, tmp_path) == "."
    assert display(tmp_path, tmp_path / "a" / "b") == "a/b"
    assert display(tmp_path / "x", tmp_path / "y") == str(tmp_path / "y")


# --- modes -------------------------------------------------------------------------------------


def test_catalog_lists_modes_in_registration_order_with_extensions_alike() -> None:
    """Covers: R9.2.17, R9.2.19, R9.2.20. Built-ins then an extension mode, in registration order,
    each a plain {name, description}; the active mode is one of them."""
    modes = ModeController((*BUILTIN_MODES, REVIEW))
    modes.register(Mode("audit", "Audit trail only.", PlanPolicy()))

    catalog = modes.catalog()

    assert [m.name for m in catalog] == ["build", "plan", "review", "audit"]
    assert all(isinstance(m.description, str) and m.description for m in catalog)
    assert modes.active.name == "build"
    assert modes.active in catalog
    modes.set("audit")
    assert modes.active.name == "audit"


def test_set_switches_and_returns_previous_and_new() -> None:
    """Checks set(): returns (previous, new) and makes the new mode active."""
    modes = ModeController()
    previous, new = modes.set("plan")
    assert (previous.name, new.name) == ("build", "plan")
    assert modes.active is new
    previous, new = modes.set("plan")
    assert (previous.name, new.name) == ("plan", "plan")


def test_unknown_mode_is_not_found_and_keeps_the_old_mode() -> None:
    """Covers: R9.2.11, R9.2.12. set() with an unknown name raises NOT_FOUND naming the known
    modes, and the active mode stays what it was."""
    modes = ModeController()
    modes.set("plan")
    with pytest.raises(ShardError) as info:
        modes.set("yolo")
    assert info.value.code is ErrorCode.NOT_FOUND
    assert "yolo" in info.value.message
    assert "build, plan" in info.value.message
    assert modes.active.name == "plan"


def test_unknown_initial_mode_is_not_found() -> None:
    """Checks that constructing with an unknown active mode fails with NOT_FOUND."""
    with pytest.raises(ShardError) as info:
        ModeController(active="nope")
    assert info.value.code is ErrorCode.NOT_FOUND


def test_a_mode_name_registers_once() -> None:
    """Checks that registering a second mode under a taken name is refused and changes nothing."""
    modes = ModeController()
    with pytest.raises(ValueError, match="already registered"):
        modes.register(Mode("plan", "another plan", BuildPolicy()))
    assert modes.get("plan") is PLAN
    assert [m.name for m in modes.catalog()] == ["build", "plan"]


# --- the tool registry ---------------------------------------------------------------------------

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

"""The permission gate: decide (pure), answered (pure), and the Gate that asks the board."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from agent._tools import WriteTool
from shard.agent.modes import BUILTIN_MODES, Mode, ModeController
from shard.agent.permissions.allowances import Allowances
from shard.agent.permissions.board import PermissionAnswer, RequestBoard
from shard.agent.permissions.gate import (
    ALLOW,
    ALWAYS,
    ALWAYS_LIKE,
    DENY,
    Allow,
    Ask,
    Decision,
    Deny,
    Gate,
    Standing,
    answered,
    build_request,
    decide,
    outside_paths,
)
from shard.agent.permissions.grants import exact_rule
from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.sink import EventSink
from shard.agent.tools.base import Tool, ToolContext
from shard.agent.tools.ls import LsTool
from shard.agent.tools.read import ReadTool
from shard.protocol.commands import PermissionResponse
from shard.protocol.events import EventBase, PermissionRequest

BUILD, PLAN = BUILTIN_MODES


class NoLsPolicy:
    def refuse(self, tool_name: str, read_only: bool) -> str | None:
        return "ls is off in review mode" if tool_name == "ls" else None


REVIEW = Mode("review", "Review only: no listing.", NoLsPolicy())


def standing(mode: Mode = BUILD, **changes: Any) -> Standing:
    """Somebody can answer, nothing granted, no allowances: what a fresh interactive agent weighs."""
    fields: dict[str, Any] = {
        "mode": mode,
        "grants": [],
        "allowances": None,
        "answerable": True,
        "headless": HeadlessPolicy(),
    }
    return Standing(**(fields | changes))


def gate(tool: Tool, args: dict[str, Any], cwd: Path, mode: Mode = BUILD, **changes: Any) -> Decision:
    return decide(tool, tool.parse(args), args, ToolContext(cwd=cwd), standing(mode, **changes))


# --- the gate ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [BUILD, PLAN])
def test_read_only_tools_inside_the_cwd_run_without_asking(tmp_path: Path, mode: Mode) -> None:
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
        decision = gate(tool, args, tmp_path, mode)
        assert decision == Allow(), (tool.name, args)


@pytest.mark.parametrize("raw", ["../secret.txt", "sub/../../secret.txt", "{outside}"])
def test_read_only_tool_outside_the_cwd_needs_approval(tmp_path: Path, raw: str) -> None:
    """Checks that a read-only tool reaching outside the cwd does not run without approval, and
    that the request built for it names the outside path."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    raw = raw.format(outside=tmp_path / "secret.txt")

    decision = gate(ReadTool(), {"path": raw}, cwd)

    assert isinstance(decision, Ask), "not refused: it needs asking"
    tool, ctx = ReadTool(), ToolContext(cwd=cwd)
    args = tool.parse({"path": raw})
    assert [o.target for o in outside_paths(tool, args, ctx)] == [tmp_path / "secret.txt"]
    for request in (
        decision.request,
        build_request(tool, args, {"path": raw}, ctx, outside_paths(tool, args, ctx)),
    ):
        assert "outside the working directory" in request.prompt
        assert str(tmp_path / "secret.txt") in request.prompt


def test_a_symlink_cannot_smuggle_a_path_outside(tmp_path: Path) -> None:
    """Checks symlink-aware containment: a link inside the cwd pointing outside is denied, a link
    pointing inside is allowed."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (cwd / "inner.txt").write_text("i")
    os.symlink(tmp_path / "secret.txt", cwd / "escape")
    os.symlink(cwd / "inner.txt", cwd / "alias")
    os.symlink(tmp_path, cwd / "up")

    assert isinstance(gate(ReadTool(), {"path": "escape"}, cwd), Ask)
    assert isinstance(gate(LsTool(), {"path": "up"}, cwd), Ask)
    assert gate(ReadTool(), {"path": "alias"}, cwd) == Allow()


def test_a_sibling_sharing_the_cwd_prefix_is_outside(tmp_path: Path) -> None:
    """Checks that /x/proj2 is not inside /x/proj (containment is by path component)."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (tmp_path / "proj2").mkdir()
    decision = gate(LsTool(), {"path": str(tmp_path / "proj2")}, cwd)
    assert isinstance(decision, Ask)


def test_cwd_reached_through_a_symlink_is_still_inside(tmp_path: Path) -> None:
    """Checks that containment compares real paths on both sides: a cwd given via a link works."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("")
    os.symlink(tmp_path / "real", tmp_path / "via")
    assert gate(ReadTool(), {"path": "f.txt"}, tmp_path / "via") == Allow()


def test_plan_mode_refuses_a_mutating_tool(tmp_path: Path) -> None:
    """Checks that plan mode refuses a non-read-only tool with the plan-mode explanation, even for
    a path inside the cwd, and the tool does not run."""
    decision = gate(WriteTool(), {"path": "new.txt", "text": "x"}, tmp_path, PLAN)
    assert isinstance(decision, Deny)
    assert "plan mode" in decision.reason
    assert "'write'" in decision.reason
    assert not (tmp_path / "new.txt").exists()


def test_build_mode_mutating_tool_needs_approval(tmp_path: Path) -> None:
    """Checks that in build mode a mutating tool inside the cwd is neither run nor refused: it
    needs approval."""
    decision = gate(WriteTool(), {"path": "new.txt"}, tmp_path, BUILD)
    assert isinstance(decision, Ask)
    assert decision.request.tool_name == "write"


def test_the_mode_policy_is_asked_before_the_path_check(tmp_path: Path) -> None:
    """Checks the order: in plan mode a mutating tool outside the cwd gets the mode's refusal, not
    the outside-the-cwd message."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    decision = gate(WriteTool(), {"path": "../out.txt"}, cwd, PLAN)
    assert isinstance(decision, Deny)
    assert "plan mode" in decision.reason
    assert "outside" not in decision.reason


def test_an_extension_mode_policy_is_consulted_like_a_built_in(tmp_path: Path) -> None:
    """Checks that a registered extension mode's refusal becomes the gate's reason verbatim."""
    decision = gate(LsTool(), {}, tmp_path, REVIEW)
    assert decision == Deny("ls is off in review mode")
    assert gate(ReadTool(), {"path": "x"}, tmp_path, REVIEW) == Allow()


# --- decide: what this run was given, stored grants, and nobody to ask ---------------------------


def test_what_the_run_was_given_runs_without_asking(tmp_path: Path) -> None:
    """Covers: R4.3.4. shard run --allow write lets a write inside the cwd run; not outside it, and
    not in plan mode, whose refusal comes first; --yes-to-all allows anything the mode allows."""
    tools = ["read", "write", "bash"]
    write = Allowances.parse(["write"], yes_to_all=False, tool_names=tools)
    assert gate(WriteTool(), {"path": "a.txt"}, tmp_path, allowances=write) == Allow()
    assert isinstance(gate(WriteTool(), {"path": "../a.txt"}, tmp_path, allowances=write), Ask)
    assert isinstance(gate(WriteTool(), {"path": "a.txt"}, tmp_path, PLAN, allowances=write), Deny)
    everything = Allowances.parse([], yes_to_all=True, tool_names=tools)
    assert gate(WriteTool(), {"path": "../a.txt"}, tmp_path, allowances=everything) == Allow()
    assert isinstance(gate(WriteTool(), {"path": "a.txt"}, tmp_path, PLAN, allowances=everything), Deny)


def test_a_stored_grant_allows_exactly_its_call(tmp_path: Path) -> None:
    """Covers: R4.3.4. An exact grant allows the same tool with the same input, nothing else."""
    args = {"path": "a.txt", "text": "x"}
    granted = [exact_rule("write", args)]
    assert gate(WriteTool(), args, tmp_path, grants=granted) == Allow()
    assert isinstance(gate(WriteTool(), {**args, "text": "y"}, tmp_path, grants=granted), Ask)


@pytest.mark.parametrize(
    ("answerable", "policy", "allowed"),
    [
        (True, "deny", True),  # somebody is there: grants apply whatever the headless policy
        (False, "deny", False),  # nobody could approve it: deny means nothing runs unattended
        (False, "allow_if_rule_matches", True),
        (False, "queue", True),
    ],
)
def test_stored_grants_and_the_headless_policy(
    tmp_path: Path, answerable: bool, policy: str, allowed: bool
) -> None:
    """Covers: R4.3.4, R10.1.5. With nobody to answer, headless deny sets stored grants aside (the
    call goes to the board, which denies it); the other policies honour them."""
    args = {"path": "a.txt"}
    decision = gate(
        WriteTool(),
        args,
        tmp_path,
        grants=[exact_rule("write", args)],
        answerable=answerable,
        headless=HeadlessPolicy(policy),
    )
    assert (decision == Allow()) is allowed
    assert allowed or isinstance(decision, Ask)


# --- answered: what an answer means ---------------------------------------------------------------


def bash_call(command: str) -> dict[str, Any]:
    return {"command": command}


@pytest.mark.parametrize(
    ("answer", "allowed", "grant"),
    [
        (PermissionAnswer(ALLOW, None, "client"), True, None),
        (PermissionAnswer(None, "allow", "client"), True, None),
        (PermissionAnswer(ALWAYS, None, "client"), True, "exact"),
        (PermissionAnswer(None, "allow_always", "client"), True, "exact"),  # legacy: exact
        (PermissionAnswer(ALWAYS_LIKE, None, "client"), True, "bash_signature"),
        (PermissionAnswer(DENY, None, "client"), False, None),
        (PermissionAnswer(None, "deny", "client"), False, None),
    ],
)
def test_an_answer_gives_a_verdict_and_maybe_a_grant(
    answer: PermissionAnswer, allowed: bool, grant: str | None
) -> None:
    """Covers: R4.3.4. allow once stores nothing; "always" (and legacy allow_always) stores an exact
    grant; "always-like" a bash_signature grant for commands like this one; deny stores nothing."""
    raw = bash_call("git status")
    verdict, rule = answered(answer, "bash", raw)
    assert (verdict == Allow()) is allowed
    assert (rule or {}).get("kind") == grant
    if grant == "exact":
        assert rule == exact_rule("bash", raw)


def test_always_like_for_a_command_without_a_signature_stores_nothing() -> None:
    """A call that cannot be analysed (not bash, or no signature) is allowed once, with no grant."""
    answer = PermissionAnswer(ALWAYS_LIKE, None, "client")
    assert answered(answer, "write", {"path": "a"}) == (Allow(), None)


@pytest.mark.parametrize(
    ("source", "because"),
    [
        ("client", "the user denied it"),
        ("headless", "no one could approve it here (headless policy)"),
        ("timeout", "no answer came in time"),
        ("abort", "the user denied it"),
    ],
)
def test_a_denial_tells_the_model_why(source: str, because: str) -> None:
    verdict, rule = answered(PermissionAnswer(None, "deny", source), "write", {"path": "a"})
    assert verdict == Deny(
        f"Permission denied: {because}. Do not retry the same call; ask the user or do something else."
    )
    assert rule is None


# --- the Gate: decide, ask the board, store the grant -----------------------------------------------


class Grants:
    def __init__(self) -> None:
        self.grants: list[Any] = []

    def grant(self, rule: dict[str, Any]) -> None:
        self.grants.append(rule)


async def test_the_gate_asks_the_board_and_stores_the_grant_it_is_given(tmp_path: Path) -> None:
    """Covers: R4.3.4. A call that needs approval goes to the board as a permission_request;
    "always" allows it and stores an exact grant, so the same call then runs without asking."""
    requests: list[PermissionRequest] = []
    asked = asyncio.Event()

    def sink(event: EventBase) -> None:
        if isinstance(event, PermissionRequest):
            requests.append(event)
            asked.set()

    events = EventSink(sink)
    events.set_status("streaming")
    board, grants = RequestBoard(events), Grants()
    gate_ = Gate(ModeController(), board, grants)
    tool, raw = WriteTool(), {"path": "a.txt"}
    ctx = ToolContext(cwd=tmp_path)
    check = asyncio.ensure_future(gate_.check(tool, tool.parse(raw), raw, ctx))
    async with asyncio.timeout(5):
        await asked.wait()
    board.answer_permission(PermissionResponse(request_id=requests[0].request_id, choice_id=ALWAYS))
    async with asyncio.timeout(5):
        assert await check == Allow()
    assert grants.grants == [exact_rule("write", raw)]
    assert await gate_.check(tool, tool.parse(raw), raw, ctx) == Allow()
    assert len(requests) == 1
    assert events.status == "streaming"


async def test_the_gate_returns_a_refusal_without_asking(tmp_path: Path) -> None:
    """Covers: R4.3.4. What decide settles (here plan mode's refusal) never reaches the board."""
    events: list[EventBase] = []
    board = RequestBoard(EventSink(events.append))
    gate_ = Gate(ModeController(active="plan"), board, Grants())
    tool, raw = WriteTool(), {"path": "a.txt"}
    verdict = await gate_.check(tool, tool.parse(raw), raw, ToolContext(cwd=tmp_path))
    assert isinstance(verdict, Deny)
    assert "plan mode" in verdict.reason
    assert events == []

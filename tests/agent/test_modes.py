"""The mode registry and the built-in modes' policies."""

from __future__ import annotations

import pytest

from shard.agent.modes import BUILTIN_MODES, BuildPolicy, Mode, ModeController, PlanPolicy
from shard.protocol.errors import ErrorCode, ShardError

BUILD, PLAN = BUILTIN_MODES


class NoLsPolicy:
    def refuse(self, tool_name: str, read_only: bool) -> str | None:
        return "ls is off in review mode" if tool_name == "ls" else None


REVIEW = Mode("review", "Review only: no listing.", NoLsPolicy())


def test_policies_answer_per_read_only_flag() -> None:
    """Checks the built-in policies directly: build refuses nothing, plan refuses only mutating."""
    assert BuildPolicy().refuse("bash", False) is None
    assert PlanPolicy().refuse("read", True) is None
    assert PlanPolicy().refuse("bash", False) is not None


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


def test_plan_refuses_the_subagent_tools_that_start_work() -> None:
    """The subagent tools are read-only for the gate; plan mode still refuses launching and
    relaunching children (new work), and lets the others run."""
    assert "plan mode" in (PlanPolicy().refuse("subagent_launch", True) or "")
    assert "plan mode" in (PlanPolicy().refuse("subagent_relaunch", True) or "")
    for name in ("subagent_wait", "subagent_status", "subagent_steer", "subagent_stop"):
        assert PlanPolicy().refuse(name, True) is None
    assert BuildPolicy().refuse("subagent_launch", True) is None

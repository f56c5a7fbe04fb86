"""Modes (PROTOCOL §9.2 set_mode/list_modes): a registry of named policies, in registration order.

A mode's policy is a small object the tool loop asks before a tool runs; it never crosses the wire —
only ``{name, description}`` does (R9.2.18). Extension modes register exactly like the built-ins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shard.protocol.errors import ErrorCode, ShardError, shown


class ModePolicy(Protocol):
    def refuse(self, tool_name: str, read_only: bool) -> str | None:
        """A refusal the model sees as the tool's error, or None to let the gate decide."""


class BuildPolicy:
    def refuse(self, tool_name: str, read_only: bool) -> str | None:
        return None


class PlanPolicy:
    # Read-only for the gate (they touch no file here), but they start work that may change things.
    STARTS_WORK = frozenset({"subagent_launch", "subagent_relaunch"})

    def refuse(self, tool_name: str, read_only: bool) -> str | None:
        if read_only and tool_name not in self.STARTS_WORK:
            return None
        return (
            f"The '{tool_name}' tool changes things and the agent is in plan mode, where only "
            "read-only tools run. Describe the change as a plan instead; the user can switch to "
            "build mode to carry it out."
        )


@dataclass(frozen=True, slots=True)
class Mode:
    name: str
    description: str
    policy: ModePolicy


BUILTIN_MODES = (
    Mode("build", "Make changes: tools that modify files or run commands ask first.", BuildPolicy()),
    Mode("plan", "Read and plan only: tools that modify anything are refused.", PlanPolicy()),
)


class ModeController:
    def __init__(self, modes: tuple[Mode, ...] = BUILTIN_MODES, active: str = "build") -> None:
        self._modes: dict[str, Mode] = {}
        for mode in modes:
            self.register(mode)
        self.active = self.get(active)

    def register(self, mode: Mode) -> None:
        if mode.name in self._modes:
            raise ValueError(f"mode {mode.name!r} is already registered")
        self._modes[mode.name] = mode

    def get(self, name: str) -> Mode:
        try:
            return self._modes[name]
        except KeyError:
            known = ", ".join(self._modes)
            raise ShardError(ErrorCode.NOT_FOUND, f"unknown mode {shown(name)} (modes: {known})") from None

    def catalog(self) -> list[Mode]:
        return list(self._modes.values())

    def set(self, name: str) -> tuple[Mode, Mode]:
        """Switch; returns (previous, new). Unknown → NOT_FOUND with the old mode kept."""
        new = self.get(name)
        previous, self.active = self.active, new
        return previous, new

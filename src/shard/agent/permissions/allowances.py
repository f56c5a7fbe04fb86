"""Per-run allowances from the command line (``shard run --allow …``, ``--yes-to-all``).

Headless, nobody can answer a permission request, so by default everything that would ask is
denied. A user who wants ``shard run`` to do real work says up front what it may do:

* ``--allow TOOL`` — every call of that tool runs without asking, on paths inside the working
  directory (a call that touches a path outside is still denied).
* ``--allow 'bash:COMMAND'`` — the grant the person would store with "always allow commands like
  COMMAND": the gate's own ``bash_signature`` rule, with the same pinning and the same rule that an
  argument outside the working directory asks again (so here: is denied). A command that cannot be
  analysed becomes an exact grant for that command.
* ``--allow bash`` — every shell command. Loud, like ``--yes-to-all``.
* ``--yes-to-all`` — every call, anywhere. Loud.

Allowances live in memory for one run: they are never written to the session.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from shard.agent.permissions.grants import exact_rule, matches, signature_rule
from shard.agent.permissions.shell import analyze


class AllowanceError(ValueError):
    """An ``--allow`` the run cannot honour; the message says why."""


@dataclass(frozen=True, slots=True)
class Allowances:
    everything: bool = False
    tools: frozenset[str] = frozenset()
    rules: tuple[dict[str, Any], ...] = ()

    @classmethod
    def parse(cls, specs: Iterable[str], *, yes_to_all: bool, tool_names: Iterable[str]) -> Allowances:
        known = set(tool_names)
        tools: set[str] = set()
        rules: list[dict[str, Any]] = []
        for spec in specs:
            name, sep, command = spec.partition(":")
            if sep and name == "bash":
                if not command.strip():
                    raise AllowanceError("--allow 'bash:' needs a command, e.g. --allow 'bash:git status'")
                signatures = analyze(command)
                rules.append(
                    signature_rule(signatures) if signatures else exact_rule("bash", {"command": command})
                )
            elif sep:
                raise AllowanceError(f"--allow {spec!r}: only bash takes a pattern (bash:COMMAND)")
            elif name in known:
                tools.add(name)
            else:
                raise AllowanceError(
                    f"--allow {spec!r}: there is no tool named {name!r} (tools: {', '.join(sorted(known))})"
                )
        return cls(everything=yes_to_all, tools=frozenset(tools), rules=tuple(rules))

    def allows(
        self, tool: str, raw_args: dict[str, Any], *, outside: bool, reach: Callable[[str], bool]
    ) -> bool:
        if self.everything:
            return True
        if tool in self.tools:
            return tool == "bash" or not outside
        return any(matches(rule, tool, raw_args, reach) for rule in self.rules)

    def describe(self) -> list[str]:
        """What the run may do, one line each, for stderr."""
        if self.everything:
            return [
                "--yes-to-all: EVERY tool call runs without asking — writes, shell commands, paths outside"
            ]
        out = []
        if "bash" in self.tools:
            out.append("--allow bash: every shell command runs without asking")
        others = sorted(self.tools - {"bash"})
        if others:
            out.append(f"allowed inside the working directory: {', '.join(others)}")
        for rule in self.rules:
            if rule["kind"] == "bash_signature":
                like = "; ".join(" ".join([s["executable"], *s["flags"]]) for s in rule["signatures"])
                out.append(f"allowed: commands like `{like}` (arguments inside the working directory)")
            else:
                out.append(f"allowed: exactly `{json.loads(rule['input'])['command']}`")
        return out

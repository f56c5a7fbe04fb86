"""The one gate every tool call passes before it runs.

Order: the mode's policy (plan refuses mutating tools), then the permission rule: a read-only tool
whose paths all lie inside the agent's cwd runs without asking; anything else needs the user's
approval. Until permission requests exist in this runtime, "needs approval" is answered the way the
default headless policy answers it — deny — with a message the model can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shard.agent.modes import Mode
from shard.agent.tools.base import Tool, ToolContext, ToolParams
from shard.agent.tools.paths import display, is_inside


@dataclass(frozen=True, slots=True)
class GateDecision:
    allowed: bool
    reason: str | None = None


async def decide(tool: Tool, args: ToolParams, ctx: ToolContext, mode: Mode) -> GateDecision:
    refusal = mode.policy.refuse(tool.name, tool.read_only)
    if refusal is not None:
        return GateDecision(False, refusal)
    outside = [p for p in tool.touched_paths(args, ctx) if not is_inside(ctx.cwd, p)]
    if tool.read_only and not outside:
        return GateDecision(True)
    return GateDecision(False, _needs_approval(tool, outside, ctx.cwd))


def _needs_approval(tool: Tool, outside: list[Path], cwd: Path) -> str:
    if outside:
        what = ", ".join(display(cwd, p) for p in outside)
        why = f"{what} is outside the working directory {cwd}"
    else:
        why = f"the '{tool.name}' tool can change things"
    return (
        f"Permission denied: {why}, so it needs the user's approval, and no one can approve it "
        "here (headless policy: deny). Stay inside the working directory or ask the user."
    )

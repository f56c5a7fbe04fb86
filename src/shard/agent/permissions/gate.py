"""The PermissionGate in front of every tool call (PROTOCOL §4.3, §9.5; DESIGN §6).

Order: the mode's policy (``plan`` refuses a mutating tool before anything is asked) → read-only
tools whose paths all lie inside the working directory run → stored grants → ask. Asking goes to
the connected client; with no client able to answer, the headless policy decides:

* ``deny`` (default): denied at once — stored grants included: nobody is watching.
* ``allow_if_rule_matches``: a stored grant allows it; anything else is denied.
* ``queue``: the request stays open (it is in ``sync.pending_requests``) until someone answers it or
  the headless timeout passes (then ``error {TIMEOUT}`` and deny).

Answers: ``allow``/``deny`` once, or a ``persist`` choice that also stores a grant — ``exact`` (this
tool with exactly this input again; what the legacy ``allow_always`` means) or, for a bash command
that can be analysed, a ``bash_signature`` grant for commands like it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shard.agent.modes import Mode
from shard.agent.permissions.grants import exact_rule, matches, signature_rule
from shard.agent.permissions.reach import reaches_outside
from shard.agent.permissions.shell import analyze
from shard.agent.tools.base import Tool, ToolContext, ToolParams
from shard.agent.tools.paths import display, locate
from shard.protocol.events import PermissionRequest
from shard.protocol.ids import new_id
from shard.protocol.permissions import PermissionChoice, PermissionDetail

if TYPE_CHECKING:
    from shard.agent.runtime import Runtime

ALLOW, ALWAYS, ALWAYS_LIKE, DENY = "allow", "always", "always-like", "deny"
HEADLESS_POLICIES = ("deny", "allow_if_rule_matches", "queue")


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Outside:
    """A path of the call that lies outside the working directory: as the call names it, and where
    it really leads (a link's target) as far as could be known without looking outside."""

    named: Path
    target: Path


def outside_paths(tool: Tool, args: ToolParams, ctx: ToolContext) -> list[Outside]:
    """The call's paths that lie outside the working directory (and the agent's spill folder),
    found without looking at anything outside them."""
    roots = [ctx.cwd] + ([ctx.spill_dir] if ctx.spill_dir else [])
    out = []
    for named in tool.touched_paths(args, ctx):
        where = locate(roots, named)
        if not where.inside:
            out.append(Outside(named, where.path))
    return out


def precheck(tool: Tool, args: ToolParams, ctx: ToolContext, mode: Mode) -> Verdict | None:
    """The part of the gate that needs no state (pure): the mode's refusal, or a read-only call
    inside the working directory that runs without asking; None when approval is needed."""
    refusal = mode.policy.refuse(tool.name, tool.read_only)
    if refusal is not None:
        return Verdict(False, refusal)
    if tool.read_only and not outside_paths(tool, args, ctx):
        return Verdict(True)
    return None


async def check(
    rt: Runtime, tool: Tool, args: ToolParams, raw_args: dict[str, Any], ctx: ToolContext
) -> Verdict:
    early = precheck(tool, args, ctx, rt.modes.active)
    if early is not None:
        return early
    outside = outside_paths(tool, args, ctx)
    headless = not rt.board.responders.present
    roots = [ctx.cwd] + ([ctx.spill_dir] if ctx.spill_dir else [])

    def reach(word: str) -> bool:
        return reaches_outside(roots, word)

    if rt.allowances is not None and rt.allowances.allows(
        tool.name, raw_args, outside=bool(outside), reach=reach
    ):
        return Verdict(True)  # given on the command line for this run

    if (not headless or rt.board.headless.grants_apply) and any(
        matches(rule, tool.name, raw_args, reach) for rule in rt.transcript.grants
    ):
        return Verdict(True)
    request = build_request(tool, args, raw_args, ctx, outside)
    answer = await rt.board.ask(request)
    allowed = answer.decision in ("allow", "allow_always") or answer.choice_id in (ALLOW, ALWAYS, ALWAYS_LIKE)
    if answer.decision == "allow_always" or answer.choice_id == ALWAYS:
        rt.transcript.grant(exact_rule(tool.name, raw_args))
    elif answer.choice_id == ALWAYS_LIKE:
        signatures = analyze(raw_args.get("command", "")) if tool.name == "bash" else None
        if signatures:
            rt.transcript.grant(signature_rule(signatures))
    if allowed:
        return Verdict(True)
    why = {"headless": "no one could approve it here (headless policy)", "timeout": "no answer came in time"}
    because = why.get(answer.source or "", "the user denied it")
    return Verdict(
        False, f"Permission denied: {because}. Do not retry the same call; ask the user or do something else."
    )


def build_request(
    tool: Tool, args: ToolParams, raw_args: dict[str, Any], ctx: ToolContext, outside: list[Outside]
) -> PermissionRequest:
    # Outside the working directory nothing may be looked at before the answer: the request is built
    # from the arguments alone, so it reads the same whether the file exists or what it holds.
    prompt, details = tool.describe_outside(args, ctx) if outside else tool.describe(args, ctx)
    if outside:
        where = ", ".join(_shown(ctx, o) for o in outside)
        prompt = f"{prompt} (outside the working directory: {where})"
        details = [
            *details,
            PermissionDetail(label="outside the working directory", value=where, format="path"),
        ]
    choices = [
        PermissionChoice(id=ALLOW, label="Allow once", accelerator="y", intent="allow"),
        PermissionChoice(
            id=ALWAYS,
            label="Always allow this exact call",
            description=(
                "Stored in this session: the same tool with exactly the same input runs without asking."
            ),
            accelerator="a",
            intent="persist",
        ),
    ]
    if tool.name == "bash":
        signatures = analyze(str(raw_args.get("command", "")))
        if signatures:
            like = "; ".join(f"`{s.describe()}`" for s in dict.fromkeys(signatures))
            choices.append(
                PermissionChoice(
                    id=ALWAYS_LIKE,
                    label=f"Always allow commands like {like}",
                    description=(
                        "Stored in this session: commands that run only these programs with exactly these "
                        "flags run without asking, whatever their other arguments inside the working "
                        "directory; an argument outside it asks again."
                    ),
                    accelerator="l",
                    intent="persist",
                )
            )
    choices.append(PermissionChoice(id=DENY, label="Deny", accelerator="n", intent="deny"))
    return PermissionRequest(
        request_id=new_id("req"),
        tool_name=tool.name,
        input=raw_args,
        prompt=prompt,
        options=["allow", "allow_always", "deny"],
        details=details,
        choices=choices,
    )


def _shown(ctx: ToolContext, outside: Outside) -> str:
    """The resolved target, after the name the call used when a link led there."""
    named = display(ctx.cwd, outside.named)
    return str(outside.target) if outside.target == outside.named else f"{named} → {outside.target}"

"""The PermissionGate in front of every tool call (PROTOCOL §4.3, §9.5; DESIGN §6).

:func:`decide` is the policy, pure: it never awaits and sends nothing, needs no runtime, and says
:class:`Allow`, :class:`Deny` (with the reason the model reads) or :class:`Ask` (with the
``permission_request`` to put to a person). It looks at the filesystem only as far as the call's own
paths do: where they lead, and what a request shows (a diff inside the working directory). Order:

1. the mode's policy (``plan`` refuses a mutating tool before anything is asked); then, with the
   sandbox in ``auto`` mode, a call the sandbox confines runs (``shard.agent.sandbox.bwrap``);
2. a read-only tool whose paths all lie inside the working directory runs;
3. what this run was given on the command line (``shard run --allow``, ``--yes-to-all``) runs;
4. a stored grant allows the call — unless nobody could approve it and the headless policy is
   ``deny`` (:mod:`~shard.agent.permissions.headless`): then nothing that needs approval runs; and
   never a call that would leave an active sandbox (:meth:`~shard.agent.tools.base.Tool.escapes`:
   ``bash {sandbox: false}``, or a working directory the sandbox cannot confine). A grant was given
   for commands like one that ran confined, or for one exact call, and a program or script the
   confined commands could rewrite would otherwise run outside on its strength: such a call asks
   each time, offering no "always" choice;
5. anything else asks.

Asking, and whatever becomes of a request nobody answers, is the request board's
(:meth:`~shard.agent.permissions.board.RequestBoard.ask`). :func:`answered` reads the answer, again
purely: ``allow``/``deny`` once, or a ``persist`` choice that also stores a grant — ``exact`` (this
tool with exactly this input again; what the legacy ``allow_always`` means) or, for a bash command
that can be analysed, a ``bash_signature`` grant for commands like it. :class:`Gate` puts the three
together for the turn loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from shard.agent.modes import Mode, ModeController
from shard.agent.permissions.allowances import Allowances
from shard.agent.permissions.board import PermissionAnswer, RequestBoard
from shard.agent.permissions.grants import exact_rule, matches, signature_rule
from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.permissions.reach import reaches_outside
from shard.agent.permissions.shell import analyze
from shard.agent.tools.base import Tool, ToolContext, ToolParams
from shard.agent.tools.paths import display, locate
from shard.protocol.agent_events import PermissionRequest
from shard.protocol.ids import new_id
from shard.protocol.permissions import PermissionChoice, PermissionDetail

ALLOW, ALWAYS, ALWAYS_LIKE, DENY = "allow", "always", "always-like", "deny"


@dataclass(frozen=True, slots=True)
class Allow:
    pass


@dataclass(frozen=True, slots=True)
class Deny:
    reason: str  # what the model is told instead of a result


@dataclass(frozen=True, slots=True)
class Ask:
    request: PermissionRequest


Decision = Allow | Deny | Ask
Verdict = Allow | Deny  # the gate's last word, once any question is answered


@dataclass(frozen=True, slots=True)
class Standing:
    """What the gate weighs besides the call itself."""

    mode: Mode
    grants: Sequence[Any]  # rules stored in the session (grants.py)
    allowances: Allowances | None  # shard run --allow / --yes-to-all: this run only
    answerable: bool  # somebody can answer a request now
    headless: HeadlessPolicy


@dataclass(frozen=True, slots=True)
class Outside:
    """A path of the call that lies outside the working directory: as the call names it, and where
    it really leads (a link's target) as far as could be known without looking outside."""

    named: Path
    target: Path


def outside_paths(tool: Tool, args: ToolParams, ctx: ToolContext) -> list[Outside]:
    """The call's paths that lie outside the working directory (and the agent's spill folder),
    found without looking at anything outside them."""
    out = []
    for named in tool.touched_paths(args, ctx):
        where = locate(_roots(ctx), named)
        if not where.inside:
            out.append(Outside(named, where.path))
    return out


def decide(
    tool: Tool, args: ToolParams, raw_args: dict[str, Any], ctx: ToolContext, standing: Standing
) -> Decision:
    refusal = standing.mode.policy.refuse(tool.name, tool.read_only)
    if refusal is not None:
        return Deny(refusal)
    if ctx.sandbox is not None and ctx.sandbox.auto and tool.confined(args, ctx):
        return Allow()  # confined: it can write only the project, see no Shard process, reach no network
    outside = outside_paths(tool, args, ctx)
    if tool.read_only and not outside:
        return Allow()
    roots = _roots(ctx)

    def reach(word: str) -> bool:
        return reaches_outside(roots, word)

    if standing.allowances is not None and standing.allowances.allows(
        tool.name, raw_args, outside=bool(outside), reach=reach
    ):
        return Allow()
    escapes = tool.escapes(args, ctx)
    if (
        not escapes
        and (standing.answerable or standing.headless.grants_apply)
        and any(matches(rule, tool.name, raw_args, reach) for rule in standing.grants)
    ):
        return Allow()
    return Ask(build_request(tool, args, raw_args, ctx, outside))


_UNANSWERED = {
    "headless": "no one could approve it here (headless policy)",
    "timeout": "no answer came in time",
}


def answered(
    answer: PermissionAnswer, tool: str, raw_args: dict[str, Any], *, persist: bool = True
) -> tuple[Verdict, Any | None]:
    """What an answer to a request means: the verdict, and the grant to store (None for none; always
    None without ``persist``: a call outside the sandbox leaves no grant)."""
    rule = None
    if persist and (answer.decision == "allow_always" or answer.choice_id == ALWAYS):
        rule = exact_rule(tool, raw_args)
    elif persist and answer.choice_id == ALWAYS_LIKE:
        signatures = analyze(raw_args.get("command", "")) if tool == "bash" else None
        rule = signature_rule(signatures) if signatures else None
    if answer.decision in ("allow", "allow_always") or answer.choice_id in (ALLOW, ALWAYS, ALWAYS_LIKE):
        return Allow(), rule
    because = _UNANSWERED.get(answer.source or "", "the user denied it")
    advice = "Do not retry the same call; ask the user or do something else."
    return Deny(f"Permission denied: {because}. {advice}"), rule


class GrantStore(Protocol):
    """Where stored grants live (the transcript: in the session, so they survive restarts and forks)."""

    @property
    def grants(self) -> Sequence[Any]: ...

    def grant(self, rule: dict[str, Any]) -> None: ...


class Gate:
    """The gate at work for the turn loop: decide, put the question to the board when the decision
    is to ask, and store the grant the answer gives."""

    def __init__(self, modes: ModeController, board: RequestBoard, grants: GrantStore) -> None:
        self._modes = modes
        self._board = board
        self._grants = grants
        self.allowances: Allowances | None = None  # set by shard run for its one run

    def standing(self) -> Standing:
        return Standing(
            mode=self._modes.active,
            grants=self._grants.grants,
            allowances=self.allowances,
            answerable=self._board.responders.present,
            headless=self._board.headless,
        )

    async def check(
        self, tool: Tool, args: ToolParams, raw_args: dict[str, Any], ctx: ToolContext
    ) -> Verdict:
        decision = decide(tool, args, raw_args, ctx, self.standing())
        if not isinstance(decision, Ask):
            return decision
        answer = await self._board.ask(decision.request)
        verdict, rule = answered(answer, tool.name, raw_args, persist=not tool.escapes(args, ctx))
        if rule is not None:
            self._grants.grant(rule)
        return verdict


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
    request = PermissionRequest(
        request_id=new_id("req"),
        tool_name=tool.name,
        input=raw_args,
        prompt=prompt,
        options=["allow", "deny"] if tool.escapes(args, ctx) else ["allow", "allow_always", "deny"],
        details=details,
        choices=_choices(tool, args, raw_args, ctx),
    )
    if ctx.tool_call_id:
        request.tool_call_id = ctx.tool_call_id  # the card a client shows the answer on
    return request


def _choices(
    tool: Tool, args: ToolParams, raw_args: dict[str, Any], ctx: ToolContext
) -> list[PermissionChoice]:
    once = PermissionChoice(id=ALLOW, label="Allow once", accelerator="y", intent="allow")
    deny = PermissionChoice(id=DENY, label="Deny", accelerator="n", intent="deny")
    if tool.escapes(args, ctx):  # outside the sandbox: no grant is kept, so none is offered
        return [once, deny]
    choices = [
        once,
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
    choices.append(deny)
    return choices


def _shown(ctx: ToolContext, outside: Outside) -> str:
    """The resolved target, after the name the call used when a link led there."""
    named = display(ctx.cwd, outside.named)
    return str(outside.target) if outside.target == outside.named else f"{named} → {outside.target}"


def _roots(ctx: ToolContext) -> list[Path]:
    return [ctx.cwd] + ([ctx.spill_dir] if ctx.spill_dir else [])

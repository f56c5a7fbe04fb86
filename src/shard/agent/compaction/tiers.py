"""The context budget of each model call, and the automatic compaction tiers the turn loop asks.

Before a turn's first call the active model's window is learnt (once per model and process,
``providers/window.py``). Each call then carries its parts — the system prompt and the tool schemas,
whose size is the budget's fixed part — and its budget (``compaction/budget.py``) says:

- the **emergency tier**: compact first when the context has reached the ceiling (window - reply);
- the **idle tier** (:func:`idle_due`): compact as the agent goes idle once the context reaches the
  trigger;
- the reply's limit, when the budget leaves less than the model's own and the window is not a
  guess (:func:`reply_cap`).

A model without a known window (a ``scripted`` one without ``context_window``) is never compacted
automatically. A window too small for the fixed part and a reply is said once per model, at the
start of the turn that finds it, as a non-fatal ``PROVIDER_ERROR`` with the figures; the automatic
tiers then stay off (a compaction cannot make that room), while a provider's own "too long" answer
still compacts once and retries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from shard.agent.catalog import ModelEntry
from shard.agent.compaction.budget import Budget, fixed_tokens, plan, too_small
from shard.agent.compaction.compactor import compact
from shard.agent.prompting.system_prompt import system_prompt
from shard.agent.providers.base import ToolSpec
from shard.protocol.agent_events import ErrorEvent
from shard.protocol.agent_results import CompactNoop, CompactResult
from shard.protocol.agents import AgentStatus
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.figures import WINDOW_SOURCES

if TYPE_CHECKING:
    from shard.agent.turn_context import TurnContext

ANTHROPIC_DEFAULT_REPLY = 16_384  # providers/anthropic.py DEFAULT_MAX_TOKENS: the Messages API needs one


@dataclass(frozen=True, slots=True)
class CallParts:
    """What every request of the next call carries besides the messages, and its budget (None: the
    model's window is not known)."""

    system: str
    tools: list[ToolSpec]
    fixed: int
    budget: Budget | None
    guessed: bool = False  # the window is Shard's default, not one anybody stated


def call_parts(ctx: TurnContext) -> CallParts:
    system = system_prompt(ctx.cwd, ctx.modes.active, list(ctx.tools), ctx.instructions, ctx.context)
    tools = [t.spec() for t in ctx.tools.values()]
    fixed = fixed_tokens(system, (_schema_text(t) for t in tools))
    window, entry = ctx.models.window(), ctx.models.model
    if window is None or entry is None:
        return CallParts(system, tools, fixed, None)
    budget = plan(window.tokens, fixed, output_limit(entry), ctx.compaction)
    return CallParts(system, tools, fixed, budget, guessed=window.source == "default")


def _schema_text(tool: ToolSpec) -> str:
    schema = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return orjson.dumps(schema).decode()


def output_limit(entry: ModelEntry) -> int | None:
    """What a request of this model asks for its reply; None: the server chooses."""
    if entry.model.max_output_tokens:
        return entry.model.max_output_tokens
    return ANTHROPIC_DEFAULT_REPLY if entry.provider.kind == "anthropic" else None


def reply_cap(parts: CallParts, entry: ModelEntry) -> int | None:
    """The reply's limit for this call when the budget leaves less than the model's own. Not for
    a guessed window: a reply cut short because Shard guessed low would cost more than the room it
    keeps (servers that check a request against their window say theirs: vLLM, llama.cpp)."""
    limit = output_limit(entry)
    if parts.budget is None or parts.guessed or limit is None or parts.budget.reply >= limit:
        return None
    return parts.budget.reply


def _automatic(ctx: TurnContext, parts: CallParts) -> Budget | None:
    budget = parts.budget
    return budget if ctx.compaction.enabled and budget is not None and budget.fits else None


def at_ceiling(ctx: TurnContext, parts: CallParts) -> bool:
    """The emergency tier: would the next call pass the ceiling?"""
    budget = _automatic(ctx, parts)
    return budget is not None and ctx.transcript.context_tokens(parts.fixed) >= budget.ceiling


def idle_due(ctx: TurnContext) -> bool:
    """The idle tier: has the context reached the trigger?"""
    parts = call_parts(ctx)
    budget = _automatic(ctx, parts)
    return budget is not None and ctx.transcript.context_tokens(parts.fixed) >= budget.trigger


async def know_the_window(ctx: TurnContext) -> None:
    """At a turn's start: learn the window (once), and say once if it is too small."""
    window = await ctx.models.learn_window()
    entry = ctx.models.model
    if window is None or entry is None or entry.id in ctx.models.told_too_small:
        return
    parts = call_parts(ctx)
    if parts.budget is not None and not parts.budget.fits:
        ctx.models.told_too_small.add(entry.id)
        source = WINDOW_SOURCES.get(window.source, window.source)
        message = too_small(parts.budget, entry.id, source, len(parts.tools))
        ctx.events.emit(ErrorEvent(code=ErrorCode.PROVIDER_ERROR.value, message=message, fatal=False))


async def auto_compact(ctx: TurnContext, back_to: AgentStatus | None) -> bool:
    """Run the pipeline for an automatic tier; a failure is reported, never fatal. True if it ran."""
    parts = call_parts(ctx)
    keep = ctx.compaction.keep_recent_tokens
    if parts.budget is not None:
        keep = parts.budget.keep(keep)
    ctx.events.set_status("compacting")
    try:
        result = await compact(
            ctx.transcript,
            ctx.models.summarizer,
            ctx.events.emit,
            keep,
            fixed=parts.fixed,
            budget=parts.budget,
        )
        return bool(result.compacted)
    except ShardError as exc:
        ctx.events.emit(ErrorEvent(code=exc.code.value, message=exc.message, fatal=False))
        return False
    finally:
        if back_to is not None:
            ctx.events.set_status(back_to)


async def manual_compact(ctx: TurnContext, keep_recent_tokens: int | None) -> CompactResult | CompactNoop:
    """``session_op compact``: the same pipeline, keeping ``keep_recent_tokens`` when the request
    names it (an explicit override), else what the window's budget keeps."""
    await ctx.models.learn_window()
    parts = call_parts(ctx)
    keep = keep_recent_tokens or ctx.compaction.keep_recent_tokens
    if keep_recent_tokens is None and parts.budget is not None:
        keep = parts.budget.keep(keep)
    return await compact(
        ctx.transcript, ctx.models.summarizer, ctx.events.emit, keep, fixed=parts.fixed, budget=parts.budget
    )

"""Compaction (PROTOCOL §9.2 session_op compact, §9.4 compaction; DESIGN §6): one deterministic
pipeline for every trigger.

1. **Choose the cut** (:func:`choose_cut`, pure): keep the most recent messages worth at least
   ``keep_recent_tokens``, starting at a safe boundary — a user prompt or an assistant message, never
   a tool result, so a tool call and its result are never split: the cut moves to the call (both
   kept), or past the results (both summarized) when keeping them would keep more than twice
   ``keep_recent_tokens`` or leave nothing to summarize. Nothing to summarize, or no safe boundary:
   ``no_safe_cut``. How much is kept follows the model's window (``compaction/budget.py``):
   ``[compaction] keep_recent_tokens`` (20,000) is its upper bound.
2. **Summarize** the span before the cut with the active model and a structured prompt (goal,
   constraints, progress, decisions, files read and modified, next steps). An earlier summary at the
   head of the span is folded in, not lost. With a known window the summary request fits in it: the
   reply is limited to the budget's ``summary`` tokens and the span's text is shortened to what is
   left (each block cut shorter, then the oldest lines left out — recall keeps them all).
3. **Append** a ``compaction`` entry (``summary``, ``first_kept_entry_id``, ``message_range`` —
   [first, last] original message ids of the span, for recall — ``tokens_before``, ``tokens_after``,
   ``index``), then emit the ``compaction`` event. A failed or empty summary appends nothing.

Token counts: what the provider last reported as context (``usage.context_tokens``) plus an estimate
(4 characters a token) of what was added since; ``tokens_after`` is that less the estimate of what
was summarized, plus the summary — so it counts what every request carries too (system prompt,
tool schemas) and compares with ``tokens_before``. Triggers
(``compaction/tiers.py``): the default tier compacts when the agent goes idle with the context at
the budget's trigger; the emergency tier compacts at an iteration boundary when the next call would
pass its ceiling; a provider "context too long" error compacts once and retries.
``compaction.enabled = false`` turns off only the automatic triggers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass

from shard.agent.catalog import ModelEntry
from shard.agent.compaction.budget import Budget
from shard.agent.providers.base import Provider, ProviderRequest, TextDelta
from shard.agent.transcript import Transcript, estimate_tokens
from shard.protocol.agent_events import Compaction
from shard.protocol.agent_results import CompactNoop, CompactResult
from shard.protocol.content import Message, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.event_base import EventBase

# The model to summarize with (the active selection); NOT_FOUND when there is none.
Summarizer = Callable[[], tuple[ModelEntry, Provider]]

_BLOCK_CHARS = 4000  # per block in the summarizer's transcript: enough to summarize, not to overflow
_MIN_BLOCK_CHARS = 200
# What a summary request carries besides the span: the instructions and their wrapping (tokens).
_SUMMARY_OVERHEAD = 400
_CHARS_PER_TOKEN = 3  # a conservative count when the span's text must fit a window

SUMMARY_SYSTEM = (
    "You write the working memory of a coding agent. The conversation below is being compacted: "
    "everything in it will be replaced by your summary, and the agent will continue from the summary "
    "alone. Write these sections, in this order, each as short bullet points:\n"
    "## Goal\n## Constraints and preferences\n## Progress\n## Key decisions\n"
    "## Files read\n## Files modified\n## Next steps\n"
    "Be specific: exact file paths, function and command names, error messages, numbers. If a previous "
    "summary is given, fold it in: keep everything from it that still matters. Output only the summary."
)


def is_tool_result(message: Message) -> bool:
    return message.role == "user" and any(isinstance(b, ToolResultBlock) for b in message.content)


@dataclass(frozen=True, slots=True)
class Cut:
    first_kept: int  # index in the window of the first kept message
    span_start: int  # index of the first message to summarize (0, or 1 after an earlier summary)


def choose_cut(
    messages: Sequence[Message], tokens: Sequence[int], keep_recent_tokens: int, has_summary: bool
) -> Cut | None:
    """Where to cut the window (pure). None: nothing can be summarized safely."""
    span_start = 1 if has_summary else 0
    kept = 0
    candidate = len(messages)
    while candidate > span_start and kept < keep_recent_tokens:
        candidate -= 1
        kept += tokens[candidate]
    if candidate < len(messages) and is_tool_result(messages[candidate]):
        candidate = _boundary(messages, tokens, candidate, span_start, keep_recent_tokens)
    if candidate <= span_start or candidate >= len(messages):
        return None
    return Cut(first_kept=candidate, span_start=span_start)


def _boundary(
    messages: Sequence[Message], tokens: Sequence[int], at: int, span_start: int, keep_recent_tokens: int
) -> int:
    """A cut at a tool result would split it from its call: move to the call (both kept) — or past
    the results (both summarized) when keeping them would leave nothing to summarize or keep more
    than twice ``keep_recent_tokens`` (one large result must not stay in a small window for good)."""
    earlier = at
    while earlier > span_start and is_tool_result(messages[earlier]):
        earlier -= 1
    later = at
    while later < len(messages) and is_tool_result(messages[later]):
        later += 1
    too_much = earlier <= span_start or sum(tokens[earlier:]) > 2 * keep_recent_tokens
    return later if too_much and later < len(messages) else earlier


def transcript(messages: Sequence[Message], limit: int | None = None) -> str:
    """The span as text for the summarizer; long blocks are cut (recall keeps the originals). With
    ``limit`` (characters) blocks are cut shorter, then the oldest lines left out, until it fits."""
    lines: list[tuple[str, str]] = []  # (label, text)
    for m in messages:
        for b in m.content:
            if isinstance(b, TextBlock):
                lines.append((f"[{m.role}]", b.text))
            elif isinstance(b, ThinkingBlock):
                lines.append((f"[{m.role} thinking]", b.text))
            elif isinstance(b, ToolCallBlock):
                lines.append((f"[tool call {b.name}]", str(b.args)))
            elif isinstance(b, ToolResultBlock):
                content = b.content
                text = (
                    getattr(content, "text", None)
                    or getattr(content, "message", None)
                    or str(getattr(content, "value", ""))
                )
                lines.append((f"[tool result{' (error)' if b.is_error else ''}]", text))
    text = "\n".join(f"{label} {_cut(body, _BLOCK_CHARS)}" for label, body in lines)
    if limit is None or len(text) <= limit:
        return text
    per_block = max(_MIN_BLOCK_CHARS, limit // max(1, len(lines)))
    rendered = [f"{label} {_cut(body, per_block)}" for label, body in lines]
    kept: list[str] = []
    size = 80  # the line that says how many were left out
    for line in reversed(rendered):  # the most recent lines matter most to what comes next
        if size + len(line) + 1 > limit and kept:
            break
        kept.append(line)
        size += len(line) + 1
    left_out = len(rendered) - len(kept)
    head = [f"[… {left_out} earlier lines left out to fit the context window]"] if left_out else []
    return "\n".join(head + kept[::-1])


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … ({len(text)} chars)"


async def summarize(
    summarizer: Summarizer, span: Sequence[Message], previous: str | None, budget: Budget | None = None
) -> str:
    entry, provider = summarizer()
    body = ""
    if previous:
        body += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
    limit = None
    if budget is not None:  # the request must fit the window: instructions, previous summary, reply
        room = budget.window - budget.summary - _SUMMARY_OVERHEAD - len(body) // _CHARS_PER_TOKEN
        limit = max(_MIN_BLOCK_CHARS, room * _CHARS_PER_TOKEN)
    body += f"<conversation>\n{transcript(span, limit)}\n</conversation>"
    request = ProviderRequest(
        model=entry.model.id,
        system=SUMMARY_SYSTEM,
        messages=[Message(id="msg-summary-request", role="user", content=[TextBlock(text=body)])],
        purpose="summary",
        max_output_tokens=budget.summary if budget is not None else None,
    )
    parts: list[str] = []
    async with aclosing(provider.stream(request)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                parts.append(event.text)
    return "".join(parts).strip()


async def compact(
    transcript: Transcript,
    summarizer: Summarizer,
    emit: Callable[[EventBase], None],
    keep_recent_tokens: int,
    *,
    fixed: int = 0,
    budget: Budget | None = None,
) -> CompactResult | CompactNoop:
    """Run the pipeline once, keeping ``keep_recent_tokens``. ``fixed``: what every request carries
    besides the messages (system prompt, tool schemas); ``budget``: the window's, when it is known.
    Raises ShardError(INTERNAL_ERROR) when the summary fails or is empty."""
    view = transcript.view
    messages = view.messages
    tokens = [estimate_tokens(m) for m in view.model_messages]  # what the model is sent, not the renders
    has_summary = view.compaction_index is not None and bool(messages)
    cut = choose_cut(messages, tokens, keep_recent_tokens, has_summary)
    if cut is None:
        return CompactNoop()
    span = messages[cut.span_start : cut.first_kept]
    previous = transcript.last_summary() if has_summary else None
    try:
        summary = await summarize(summarizer, span, previous, budget)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        raise ShardError(
            ErrorCode.INTERNAL_ERROR, f"compaction failed: the summarizer failed: {message}"
        ) from None
    if not summary:
        raise ShardError(
            ErrorCode.INTERNAL_ERROR, "compaction failed: the summarizer returned an empty summary"
        )
    tokens_before = transcript.context_tokens(fixed)
    index = (view.dicts.compactions or 0) + 1
    first_kept = messages[cut.first_kept].id
    message_range = [span[0].id, span[-1].id]
    # What the requests carry less what was summarized (the provider's count stays the base), plus
    # the summary message: never less than the estimate of the kept messages.
    removed = sum(tokens[: cut.first_kept])
    kept_tokens = sum(tokens[cut.first_kept :])
    tokens_after = max(tokens_before - removed, kept_tokens) + max(1, len(summary) // 4) + 60
    transcript.record(
        "compaction",
        index=index,
        summary=summary,
        first_kept_entry_id=first_kept,
        message_range=message_range,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
    )
    transcript.note_context(tokens_after)
    event = Compaction(
        index=index,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        first_kept_entry_id=first_kept,
        message_range=message_range,
    )
    emit(event)
    return CompactResult(
        index=index,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        first_kept_entry_id=first_kept,
        message_range=message_range,
    )

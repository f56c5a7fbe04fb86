"""Compaction (PROTOCOL §9.2 session_op compact, §9.4 compaction; DESIGN §6): one deterministic
pipeline for every trigger.

1. **Choose the cut** (:func:`choose_cut`, pure): keep the most recent messages worth at least
   ``keep_recent_tokens`` (default 20,000), starting at a safe boundary — a user prompt or an assistant
   message, never a tool result, so a tool call and its result are never split. Nothing to summarize,
   or no safe boundary: ``no_safe_cut``.
2. **Summarize** the span before the cut with the active model and a structured prompt (goal,
   constraints, progress, decisions, files read and modified, next steps). An earlier summary at the
   head of the span is folded in, not lost.
3. **Append** a ``compaction`` entry (``summary``, ``first_kept_entry_id``, ``message_range`` —
   [first, last] original message ids of the span, for recall — ``tokens_before``, ``tokens_after``,
   ``index``), then emit the ``compaction`` event. A failed or empty summary appends nothing.

Token counts: what the provider last reported as context (``usage.context_tokens``) plus an estimate
(4 characters a token) of what was added since. Triggers: the default tier compacts when the agent
goes idle with context above ``threshold`` (0.8) of the window; the emergency tier compacts at an
iteration boundary when the next call would overflow; a provider "context too long" error compacts
once and retries. ``compaction.enabled = false`` turns off only the automatic triggers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass

from shard.agent.catalog import ModelEntry
from shard.agent.config import CompactionConfig
from shard.agent.providers.base import Provider, ProviderRequest, TextDelta
from shard.agent.transcript import Transcript, estimate_tokens
from shard.protocol.content import Message, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.events import Compaction, EventBase
from shard.protocol.results import CompactNoop, CompactResult

# The model to summarize with (the active selection); NOT_FOUND when there is none.
Summarizer = Callable[[], tuple[ModelEntry, Provider]]

_BLOCK_CHARS = 4000  # per block in the summarizer's transcript: enough to summarize, not to overflow

SUMMARY_SYSTEM = (
    "You write the working memory of a coding agent. The conversation below is being compacted: "
    "everything in it will be replaced by your summary, and the agent will continue from the summary "
    "alone. Write these sections, in this order, each as short bullet points:\n"
    "## Goal\n## Constraints and preferences\n## Progress\n## Key decisions\n"
    "## Files read\n## Files modified\n## Next steps\n"
    "Be specific: exact file paths, function and command names, error messages, numbers. If a previous "
    "summary is given, fold it in: keep everything from it that still matters. Output only the summary."
)


def due(tokens: int, window: int | None, settings: CompactionConfig, fraction: float) -> bool:
    """Has the context reached ``fraction`` of the window? Never for a model without a known window,
    nor with the automatic tiers turned off."""
    return bool(settings.enabled and window and tokens >= window * fraction)


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
    # never keep a tool result without the call it answers: move to an earlier safe boundary
    while candidate > span_start and is_tool_result(messages[candidate]):
        candidate -= 1
    if candidate <= span_start or candidate >= len(messages):
        return None
    return Cut(first_kept=candidate, span_start=span_start)


def transcript(messages: Sequence[Message]) -> str:
    """The span as text for the summarizer; long blocks are cut (recall keeps the originals)."""
    lines: list[str] = []
    for m in messages:
        for b in m.content:
            if isinstance(b, TextBlock):
                lines.append(f"[{m.role}] {_cut(b.text)}")
            elif isinstance(b, ThinkingBlock):
                lines.append(f"[{m.role} thinking] {_cut(b.text)}")
            elif isinstance(b, ToolCallBlock):
                lines.append(f"[tool call {b.name}] {_cut(str(b.args))}")
            elif isinstance(b, ToolResultBlock):
                content = b.content
                text = (
                    getattr(content, "text", None)
                    or getattr(content, "message", None)
                    or str(getattr(content, "value", ""))
                )
                lines.append(f"[tool result{' (error)' if b.is_error else ''}] {_cut(text)}")
    return "\n".join(lines)


def _cut(text: str) -> str:
    return text if len(text) <= _BLOCK_CHARS else text[:_BLOCK_CHARS] + f" … ({len(text)} chars)"


async def summarize(summarizer: Summarizer, span: Sequence[Message], previous: str | None) -> str:
    entry, provider = summarizer()
    body = ""
    if previous:
        body += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
    body += f"<conversation>\n{transcript(span)}\n</conversation>"
    request = ProviderRequest(
        model=entry.model.id,
        system=SUMMARY_SYSTEM,
        messages=[Message(id="msg-summary-request", role="user", content=[TextBlock(text=body)])],
        purpose="summary",
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
) -> CompactResult | CompactNoop:
    """Run the pipeline once. Raises ShardError(INTERNAL_ERROR) when the summary fails or is empty."""
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
        summary = await summarize(summarizer, span, previous)
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
    tokens_before = transcript.context_tokens()
    index = (view.dicts.compactions or 0) + 1
    first_kept = messages[cut.first_kept].id
    message_range = [span[0].id, span[-1].id]
    kept_tokens = sum(tokens[cut.first_kept :])
    tokens_after = kept_tokens + max(1, len(summary) // 4) + 60
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

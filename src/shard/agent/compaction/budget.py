"""How a model's context window is shared out (pure): what Shard always sends, the reply, and the
conversation — and from that, when compaction runs and how much it keeps.

Every request carries a **fixed part** — the system prompt and the tool schemas (about 2,200 tokens
with the default tools, 3,500 with a daemon's subagent tools) — before any message. The **reply**
needs room too: the request's output limit (``max_output_tokens``; the anthropic kind's 16,384 when
unset; 4,096 when a server chooses its own), but never more than a quarter of the window, nor less
than 1,024 tokens when that limit allows. What is left is the conversation's **room**::

    ceiling = window - reply            # the most a request may carry
    room    = ceiling - fixed           # what the conversation may take
    trigger = fixed + threshold * room  # idle tier: compact as the agent goes idle at this context
    keep    = min(keep_recent_tokens, 30 % of room)   # recent tokens a compaction keeps
    summary = min(8,192, 15 % of room)  # the summary's output limit

The emergency tier compacts before a call when the context has reached the ceiling. Config values
are upper bounds (``keep_recent_tokens``, ``max_output_tokens``) or the fraction itself
(``threshold``); a ``session_op compact`` that names ``keep_recent_tokens`` overrides ``keep``.

A window whose room is under 512 tokens cannot hold the fixed part, a reply and a short exchange:
it is said once, with the figures (:func:`too_small`), and the automatic tiers stay off — compacting
cannot make room that is not there.

At 8,192 tokens with the default tools: reply 2,048, room 3,944, trigger 5,355, keep 1,183,
summary 591. At 200,000 with a 64,000-token output limit: reply 50,000, trigger 120,440, keep
20,000, summary 8,192.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

from shard.agent.config.settings import CompactionConfig

NOMINAL_REPLY = 4_096  # the reply's share when the server chooses the output limit itself
MIN_REPLY = 1_024
MIN_ROOM = 512
KEEP_SHARE = 0.3
SUMMARY_SHARE = 0.15
SUMMARY_MAX = 8_192
MIN_SUMMARY = 128
# JSON schemas and a system prompt tokenize denser than chat text: 3.3 characters a token puts the
# default tools at ~2,200 tokens and the subagent tools at ~3,600, as llama.cpp counted them.
FIXED_CHARS_PER_TOKEN = 3.3


class Budget(NamedTuple):
    window: int
    fixed: int
    reply: int
    threshold: float

    @property
    def ceiling(self) -> int:
        return self.window - self.reply

    @property
    def room(self) -> int:
        return self.ceiling - self.fixed

    @property
    def fits(self) -> bool:
        return self.room >= MIN_ROOM

    @property
    def trigger(self) -> int:
        return self.fixed + int(self.threshold * max(0, self.room))

    def keep(self, keep_recent_tokens: int) -> int:
        return max(1, min(keep_recent_tokens, int(KEEP_SHARE * self.room)))

    @property
    def summary(self) -> int:
        return max(MIN_SUMMARY, min(SUMMARY_MAX, int(SUMMARY_SHARE * self.room)))


def plan(window: int, fixed: int, output_limit: int | None, settings: CompactionConfig) -> Budget:
    """The budget of one request: ``output_limit`` is what it asks for its reply (None: the server's
    own)."""
    asked = output_limit or NOMINAL_REPLY
    reply = min(asked, max(window // 4, MIN_REPLY))
    return Budget(window=window, fixed=fixed, reply=reply, threshold=settings.threshold)


def fixed_tokens(system: str, tool_schemas: Iterable[str]) -> int:
    """The fixed part of every request, estimated from its text (the system prompt, each tool's
    schema as JSON)."""
    chars = len(system) + sum(len(s) for s in tool_schemas)
    return math.ceil(chars / FIXED_CHARS_PER_TOKEN)


def too_small(budget: Budget, model: str, source: str, tools: int) -> str:
    """One line, with the figures, for a window that cannot hold the fixed part and a reply."""
    need = budget.fixed + budget.reply + MIN_ROOM
    return (
        f"the context window of {model} ({budget.window:,} tokens, {source}) is too small: the system "
        f"prompt and {tools} tool schemas take {budget.fixed:,}, a reply needs {budget.reply:,} and the "
        f"conversation at least {MIN_ROOM:,} ({need:,} in all). Give the server a larger context "
        "(llama-server -c, OLLAMA_CONTEXT_LENGTH, vLLM --max-model-len) and set context_window in "
        "config.toml, or offer fewer tools (--tools); automatic compaction is off until then"
    )

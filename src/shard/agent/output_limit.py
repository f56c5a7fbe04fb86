"""A reply cut at the model's output limit: what the person is told, and what the model is told of
a tool call the limit cut (issue 27 item 5).

The reply is kept and recorded ``stop_reason: "max_tokens"`` (``shard.protocol.stops``). A text cut
short is one non-fatal error naming the limit. A tool call whose arguments the limit cut
(``AssembledToolCall.cut``) never runs: it gets an error result saying so — every call keeps its
result, so the next request is valid — and no ``tool_call`` event. The turn then goes on
:func:`continuations` times (the model, told its call was cut, may make it again with shorter
arguments or in smaller steps); a reply cut in a call once more ends the turn with one error naming
the limit, the call and how to raise the limit. The limit itself is never raised behind the
person's back: it is theirs (``max_output_tokens``) or the server's.
"""

from __future__ import annotations

from shard.agent.catalog import ModelEntry
from shard.agent.config.settings import RetryConfig

CUT_CALL = (
    "Not run: your reply reached the output limit while the arguments of this call were being written, "
    "so they are incomplete. Make the call again with shorter arguments, or do the work in smaller steps."
)
CUT = "the reply was cut at the model's output limit"


def continuations(retry: RetryConfig) -> int:
    """How often a turn goes on after a reply that cut a tool call: once, none when ``[retry]
    max_attempts = 1`` turns every second try off."""
    return 1 if retry.max_attempts > 1 else 0


def notice(entry: ModelEntry, limit: int | None, cut: list[str] | None = None, *, again: bool = False) -> str:
    """The one error a person is told of a reply cut at ``limit`` (None: the server chose it), and
    of the calls in it that did not run (``again``: after the model was told of an earlier cut)."""
    asked = f"max_tokens {limit}" if limit else "the server's own max_tokens"
    sets = f"max_output_tokens of {entry.id} in config.toml sets the limit"
    if not cut:
        return f"{CUT} ({asked}); what arrived is kept. {sets}"
    calls = " and ".join(f"'{name}'" for name in cut)
    told = ", after the model was told of the cut and asked again" if again else ""
    return f"{CUT} ({asked}) in the middle of a call to {calls}, which did not run{told}. {sets}"

"""What a provider is: ``stream(request)`` yields normalized events; failures raise ProviderError.

The normalized stream is deliberately small — text, thinking, tool-call start and argument fragments,
usage, and the stop — so that every backend folds into it and the turn loop knows nothing of any SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from shard.protocol.content import Message
from shard.protocol.errors import ErrorCode, ShardError

StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str
    signature: str | None = None  # providers that sign thinking keep it for the next request


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgs:
    fragment: str  # a piece of the JSON arguments text; concatenate, then parse (P1)
    call_id: str | None = None  # which call, when a provider interleaves parallel calls; else the last


@dataclass(frozen=True, slots=True)
class UsageReport:
    input: int
    output: int
    cache_read: int | None = None
    cache_write: int | None = None
    context_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    reason: StopReason
    # With "max_tokens": the output limit the request asked for; None when the server chose it.
    output_limit: int | None = None


ProviderEvent = TextDelta | ThinkingDelta | ToolCallStart | ToolCallArgs | UsageReport | Stop


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ProviderRequest:
    model: str  # the model name as the provider knows it
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    reasoning: str | None = None
    purpose: Literal["turn", "summary"] = "turn"
    # How many assistant messages the session held before this call — stable across compaction,
    # which shrinks `messages`. Only the scripted provider uses it (to pick its step).
    call_index: int | None = None
    # The reply's limit when the context budget (compaction/budget.py) leaves it less than the model's
    # own: the request asks for this instead of max_output_tokens.
    max_output_tokens: int | None = None


class ProviderError(ShardError):
    """A provider call failed.

    ``retryable`` marks rate limits, overloads, server errors and dropped connections; ``retry_after``
    is the server's Retry-After in seconds when it sent one; ``context_overflow`` marks a request the
    model refused because the context is too long. ``refused`` marks a refused connection (nothing
    listens there) and ``endpoint`` is the base URL it was refused at, when the provider names one:
    the retry policy gives up sooner on this machine or a private network (``retry.py``).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        context_overflow: bool = False,
        refused: bool = False,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(ErrorCode.PROVIDER_ERROR, message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.context_overflow = context_overflow
        self.refused = refused
        self.endpoint = endpoint


class Provider(Protocol):
    name: str

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Yield the response as normalized events, ending with exactly one Stop."""
        ...

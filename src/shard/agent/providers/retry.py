"""Retrying provider calls: 429 / 529 / 5xx / dropped connections, with exponential backoff and jitter,
honouring Retry-After, bounded by ``[retry]`` in config.toml.

A call is retried only while it has produced nothing: once a stream has yielded an event, a failure
ends it (the partial message is kept, marked incomplete) — replaying it would show the user the same
deltas twice.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing

from shard.agent.config import RetryConfig
from shard.agent.providers.base import Provider, ProviderError, ProviderEvent, ProviderRequest


def backoff_delay(attempt: int, policy: RetryConfig, retry_after: float | None, rand: float) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based). Pure: ``rand`` is in [0, 1).

    Exponential (base · 2^(attempt-1)) with jitter in [50 %, 100 %], capped at ``max_delay``; a
    server's Retry-After, when given, is honoured (also capped, so a hostile header cannot park the
    agent for an hour).
    """
    exp = min(policy.max_delay, policy.base_delay * (2 ** min(attempt - 1, 60)))
    delay = exp * (0.5 + rand / 2)
    if retry_after is not None:
        delay = max(0.0, min(policy.max_delay, retry_after))
    return delay


def describe(error: ProviderError) -> str:
    if error.status == 429:
        return "HTTP 429 rate limited"
    if error.status == 529:
        return "HTTP 529 overloaded"
    if error.status is not None:
        return f"HTTP {error.status}"
    return error.message.split(": ", 1)[-1]  # the cause without the provider's name: "connection refused …"


async def stream_with_retries(
    provider: Provider,
    request: ProviderRequest,
    policy: RetryConfig,
    on_retry: Callable[[str | None], None],
    sleep: Callable[[float], object] = asyncio.sleep,
) -> AsyncIterator[ProviderEvent]:
    """``provider.stream(request)``, retried while nothing has been yielded.

    ``on_retry(detail)`` is told before each wait (for a ``status`` detail) and with ``None`` once a
    retried call produces its first event.
    """
    attempt = 1
    while True:
        produced = False
        try:
            async with aclosing(provider.stream(request)) as events:
                async for event in events:
                    if not produced and attempt > 1:
                        on_retry(None)
                    produced = True
                    yield event
            return
        except ProviderError as exc:
            if produced or not exc.retryable or attempt >= policy.max_attempts:
                if attempt > 1 and not produced:
                    on_retry(None)
                    exc.message = f"{exc.message} (gave up after {attempt} attempts)"
                raise
            delay = backoff_delay(attempt, policy, exc.retry_after, random.random())
            on_retry(
                f"retrying in {delay:.1f} s: {describe(exc)} (attempt {attempt + 1} of {policy.max_attempts})"
            )
            await sleep(delay)
            attempt += 1

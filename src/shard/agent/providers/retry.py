"""Retrying provider calls: 429 / 529 / 5xx / dropped connections, with exponential backoff and jitter,
honouring Retry-After, bounded by ``[retry]`` in config.toml.

A call is retried only while it has produced nothing: once a stream has yielded an event, a failure
ends it (the partial message is kept, marked incomplete) — replaying it would show the user the same
deltas twice.

A refused connection to this machine or a private network (a local server that is not running) is
retried once, after a short delay, and then fails: nothing will start listening there while the
user waits through the remote schedule (five attempts, ~13 s). Remote hosts keep the schedule.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from urllib.parse import urlsplit

from shard.agent.config.settings import RetryConfig
from shard.agent.providers.base import Provider, ProviderError, ProviderEvent, ProviderRequest

LOCAL_REFUSED_ATTEMPTS = 2  # a refused connection on this machine or a private network: one retry
LOCAL_REFUSED_DELAY = 0.5  # seconds before it (at most: a smaller [retry] base_delay wins)

_LOCAL_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in (
        "127.0.0.0/8",  # loopback
        "::1/128",
        "10.0.0.0/8",  # private
        "172.16.0.0/12",
        "192.168.0.0/16",
        "fc00::/7",
        "169.254.0.0/16",  # link-local
        "fe80::/10",
        "0.0.0.0/32",  # "any": a connection to it reaches this machine
        "::/128",
    )
)


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


def is_local(url: str | None) -> bool:
    """Whether ``url``'s host is this machine or a private network: a ``localhost`` name, loopback
    (127.0.0.0/8, ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7) or link-local (169.254/16,
    fe80::/10) addresses. Pure: a name is never resolved, so any other name counts as remote."""
    if not url:
        return False
    try:
        host = urlsplit(url if "//" in url else f"//{url}").hostname
    except ValueError:
        return False
    if not host:
        return False
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # fe80::1%eth0: the zone is no part of it
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in net for net in _LOCAL_NETWORKS)


def max_attempts(error: ProviderError, policy: RetryConfig) -> int:
    """How many attempts a call that failed with ``error`` gets in all."""
    if error.refused and is_local(error.endpoint):
        return min(policy.max_attempts, LOCAL_REFUSED_ATTEMPTS)
    return policy.max_attempts


def next_delay(error: ProviderError, attempt: int, policy: RetryConfig, rand: float) -> float | None:
    """Seconds to wait before trying again after attempt number ``attempt`` (1-based) failed with
    ``error``, or None to give up. Pure: ``rand`` is in [0, 1)."""
    if not error.retryable or attempt >= max_attempts(error, policy):
        return None
    if error.refused and is_local(error.endpoint):
        return min(LOCAL_REFUSED_DELAY, policy.base_delay)
    return backoff_delay(attempt, policy, error.retry_after, rand)


def describe(error: ProviderError) -> str:
    """The cause of a retry in a few words, for the ``retrying in …`` line."""
    if error.status == 429:
        return "HTTP 429 rate limited"
    if error.status == 529:
        return "HTTP 529 overloaded"
    if error.status is not None:
        return f"HTTP {error.status}"
    if error.refused:
        return "connection refused"
    return error.message.split(": ", 1)[-1]  # the cause without the provider's name: "connection lost …"


async def stream_with_retries(
    provider: Provider,
    request: ProviderRequest,
    policy: RetryConfig,
    on_retry: Callable[[str | None], None],
    sleep: Callable[[float], object] = asyncio.sleep,
) -> AsyncIterator[ProviderEvent]:
    """``provider.stream(request)``, retried while nothing has been yielded.

    ``on_retry(detail)`` is told before each wait (``retrying in 2.5 s: connection refused (attempt
    2 of 5)``, a ``status`` detail) and with ``None`` once the retried call produces its first event
    or the retries give up, so no client is left showing a retry that is over.
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
            delay = None if produced else next_delay(exc, attempt, policy, random.random())
            if delay is None:
                if attempt > 1 and not produced:
                    on_retry(None)
                    exc.message = f"{exc.message} (gave up after {attempt} attempts)"
                raise
            of = max_attempts(exc, policy)
            on_retry(f"retrying in {delay:.1f} s: {describe(exc)} (attempt {attempt + 1} of {of})")
            await sleep(delay)
            attempt += 1

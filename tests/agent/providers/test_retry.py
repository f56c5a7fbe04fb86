"""Retrying provider calls: the pure backoff schedule, and the wrapper that retries only while a call
has produced nothing (driven by a fake provider and a recording sleep — no real waiting)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shard.agent.config.settings import ProviderConfig, RetryConfig
from shard.agent.providers.base import ProviderError, ProviderEvent, ProviderRequest, Stop, TextDelta
from shard.agent.providers.errors import translate
from shard.agent.providers.retry import (
    backoff_delay,
    is_local,
    max_attempts,
    next_delay,
    stream_with_retries,
)

POLICY = RetryConfig(max_attempts=5, base_delay=1.0, max_delay=30.0)


def test_backoff_is_exponential_from_the_base():
    """With no jitter taken off (rand → 1) the delays double from base_delay: 1, 2, 4, 8, 16."""
    top = 1 - 1e-12
    delays = [backoff_delay(a, POLICY, None, top) for a in range(1, 6)]
    assert delays == pytest.approx([1.0, 2.0, 4.0, 8.0, 16.0])
    assert [backoff_delay(a, POLICY, None, 0.0) for a in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_backoff_is_capped_at_max_delay():
    """Past the cap every delay stays within max_delay (jitter applies below the cap)."""
    assert backoff_delay(6, POLICY, None, 1 - 1e-12) == pytest.approx(30.0)
    assert backoff_delay(20, POLICY, None, 0.0) == 15.0
    assert backoff_delay(60, POLICY, None, 0.999) <= 30.0


@given(
    attempt=st.integers(min_value=1, max_value=64),
    rand=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    base=st.floats(min_value=0.001, max_value=10.0),
    cap=st.floats(min_value=0.001, max_value=120.0),
)
def test_backoff_jitter_stays_within_half_to_full(attempt, rand, base, cap):
    """Jitter keeps each delay between 50 % and 100 % of the capped exponential value, and never
    above max_delay."""
    policy = RetryConfig(max_attempts=100, base_delay=base, max_delay=cap)
    full = min(cap, base * 2 ** (attempt - 1))
    delay = backoff_delay(attempt, policy, None, rand)
    assert full * 0.5 - 1e-9 <= delay <= full + 1e-9
    assert delay <= cap + 1e-9


def test_backoff_survives_very_high_attempt_numbers():
    """A config may allow thousands of attempts ([retry] max_attempts has no upper bound); the
    schedule must stay capped instead of overflowing a float at attempt ~1025."""
    policy = RetryConfig(max_attempts=5000, base_delay=1.0, max_delay=30.0)
    assert 15.0 <= backoff_delay(1100, policy, None, 0.5) <= 30.0


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [(7.0, 7.0), (0.0, 0.0), (0.25, 0.25), (3600.0, 30.0), (-5.0, 0.0)],
)
@pytest.mark.parametrize("rand", [0.0, 0.5, 0.99])
def test_retry_after_is_honoured_and_capped(retry_after, expected, rand):
    """A server's Retry-After replaces the computed delay (no jitter), capped at max_delay and never
    negative."""
    assert backoff_delay(3, POLICY, retry_after, rand) == expected


class FakeProvider:
    """Plays one outcome per call: a list of events, optionally followed by an error."""

    name = "fake"

    def __init__(self, *outcomes: tuple[list[ProviderEvent], ProviderError | None]) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        events, error = self.outcomes[self.calls]
        self.calls += 1
        for event in events:
            yield event
        if error is not None:
            raise error


class Recorder:
    def __init__(self) -> None:
        self.details: list[str | None] = []
        self.sleeps: list[float] = []

    def on_retry(self, detail: str | None) -> None:
        self.details.append(detail)

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)


def _rate_limited(retry_after: float | None = None) -> ProviderError:
    return ProviderError("fake: HTTP 429", retryable=True, status=429, retry_after=retry_after)


REQUEST = ProviderRequest(model="m", system="s", messages=[])
OK = [TextDelta("hi"), Stop("end_turn")]


async def _drain(provider: FakeProvider, rec: Recorder, policy: RetryConfig = POLICY) -> list[ProviderEvent]:
    out = []
    async for event in stream_with_retries(provider, REQUEST, policy, rec.on_retry, sleep=rec.sleep):
        out.append(event)
    return out


async def test_retries_while_nothing_was_yielded_then_clears_the_detail():
    """Two 429s then success: the events arrive once; on_retry is told a detail before each wait
    (mentioning 'retrying', the status and the attempt) and then None once the retried call
    produces its first event; Retry-After is what the wrapper sleeps."""
    provider = FakeProvider(([], _rate_limited(2.5)), ([], _rate_limited(0.0)), (OK, None))
    rec = Recorder()
    assert await _drain(provider, rec) == OK
    assert provider.calls == 3
    assert rec.sleeps == [2.5, 0.0]
    assert len(rec.details) == 3
    first, second, last = rec.details
    assert first is not None
    assert second is not None
    assert "retrying" in first
    assert "429" in first
    assert "attempt 2 of 5" in first
    assert "attempt 3 of 5" in second
    assert last is None


async def test_failure_after_the_first_event_is_not_retried():
    """Once a call has yielded an event, a retryable failure ends it: no replay, no on_retry."""
    provider = FakeProvider(([TextDelta("half")], _rate_limited()), (OK, None))
    rec = Recorder()
    out: list[ProviderEvent] = []

    async def drain() -> None:
        async for event in stream_with_retries(provider, REQUEST, POLICY, rec.on_retry, sleep=rec.sleep):
            out.append(event)

    with pytest.raises(ProviderError):
        await drain()
    assert out == [TextDelta("half")]
    assert provider.calls == 1
    assert rec.details == []
    assert rec.sleeps == []


async def test_non_retryable_failure_is_raised_at_once():
    """A non-retryable error (e.g. 401) is raised on the first attempt, untouched."""
    error = ProviderError("fake: authentication failed", status=401)
    provider = FakeProvider(([], error), (OK, None))
    rec = Recorder()
    with pytest.raises(ProviderError) as info:
        await _drain(provider, rec)
    assert info.value is error
    assert info.value.message == "fake: authentication failed"
    assert provider.calls == 1
    assert rec.details == []
    assert rec.sleeps == []


async def test_gives_up_after_max_attempts():
    """Persistent 5xx: exactly max_attempts calls, max_attempts - 1 waits, the final error says it
    gave up, and on_retry ends with None so no 'retrying' detail is left showing."""
    policy = RetryConfig(max_attempts=3, base_delay=0.01, max_delay=0.05)
    server_error = [([], ProviderError("fake: HTTP 500", retryable=True, status=500)) for _ in range(3)]
    provider = FakeProvider(*server_error)
    rec = Recorder()
    with pytest.raises(ProviderError) as info:
        await _drain(provider, rec, policy)
    assert provider.calls == 3
    assert len(rec.sleeps) == 2
    assert all(0.005 <= s <= 0.05 for s in rec.sleeps)
    assert "gave up after 3 attempts" in info.value.message
    assert [d is None for d in rec.details] == [False, False, True]
    assert all("500" in d for d in rec.details[:2] if d)


async def test_single_attempt_policy_never_retries():
    """max_attempts = 1 means one call and no waiting, even for a retryable error."""
    provider = FakeProvider(([], _rate_limited()), (OK, None))
    rec = Recorder()
    with pytest.raises(ProviderError):
        await _drain(provider, rec, RetryConfig(max_attempts=1))
    assert provider.calls == 1
    assert rec.sleeps == []
    assert rec.details == []


async def test_connection_lost_detail():
    """A dropped connection (no HTTP status) is described as such in the retry detail."""
    provider = FakeProvider(([], ProviderError("fake: connection lost", retryable=True)), (OK, None))
    rec = Recorder()
    assert await _drain(provider, rec) == OK
    assert rec.details[0] is not None
    assert "connection lost" in rec.details[0]
    assert rec.details[-1] is None


# --- a refused connection on this machine or a private network: one short retry -----------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://127.5.6.7/v1",
        "http://[::1]:11434/v1",
        "http://10.1.2.3:8000",
        "http://172.16.0.1/v1",
        "http://172.31.255.254/v1",
        "https://192.168.1.20:8443/v1",
        "http://[fd12:3456::1]/v1",
        "http://169.254.10.1/v1",
        "http://[fe80::1]:8080/v1",
        "http://[::ffff:127.0.0.1]:8080/v1",
        "http://0.0.0.0:8080/v1",
        "http://localhost:11434/v1",
        "http://LOCALHOST.:11434/v1",
        "http://ollama.localhost/v1",
    ],
)
def test_loopback_private_and_link_local_hosts_are_local(url):
    """Loopback, private and link-local addresses and ``localhost`` names are this machine or a
    private network."""
    assert is_local(url)


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "https://api.openai.com/v1",
        "http://172.32.0.1/v1",  # just past 172.16/12
        "http://8.8.8.8/v1",
        "http://[2001:db8::1]/v1",
        "http://localhost.example.com/v1",  # a name is never resolved: remote
        "http://[not an address/v1",
    ],
)
def test_public_hosts_names_and_no_url_are_remote(url):
    """Anything else is remote: public addresses, other names (never resolved), no URL at all."""
    assert not is_local(url)


def _refused(url: str | None) -> ProviderError:
    return ProviderError(
        f"fake: nothing is listening at {url}: is the server running?",
        retryable=True,
        refused=True,
        endpoint=url,
    )


LOCAL = "http://127.0.0.1:8080/v1"


def test_a_local_refusal_is_retried_once_after_half_a_second():
    """A refused connection to a local address: one retry after 0.5 s, whatever the jitter; then give
    up — not the five attempts a remote host gets."""
    error = _refused(LOCAL)
    assert max_attempts(error, POLICY) == 2
    assert next_delay(error, 1, POLICY, 0.0) == 0.5
    assert next_delay(error, 1, POLICY, 0.99) == 0.5
    assert next_delay(error, 2, POLICY, 0.5) is None


def test_a_local_refusal_respects_a_smaller_configured_policy():
    """A smaller ``base_delay`` shortens the wait; ``max_attempts = 1`` means no retry at all."""
    assert next_delay(_refused(LOCAL), 1, RetryConfig(base_delay=0.01), 0.5) == 0.01
    assert next_delay(_refused(LOCAL), 1, RetryConfig(max_attempts=1), 0.5) is None


@pytest.mark.parametrize("url", ["https://api.example.com/v1", None])
def test_a_remote_refusal_keeps_the_schedule(url):
    """A remote host (or none named) keeps the exponential schedule and all five attempts."""
    error = _refused(url)
    assert max_attempts(error, POLICY) == 5
    assert [next_delay(error, a, POLICY, 1 - 1e-12) for a in range(1, 5)] == pytest.approx([1, 2, 4, 8])
    assert next_delay(error, 5, POLICY, 0.5) is None


def test_other_local_failures_keep_the_schedule():
    """Only a refusal is cut short: a local server that answers 503 or drops the connection is
    retried like any other."""
    busy = ProviderError("fake: HTTP 503", retryable=True, status=503, endpoint=LOCAL)
    dropped = ProviderError("fake: connection lost (eof)", retryable=True, endpoint=LOCAL)
    for error in (busy, dropped):
        assert max_attempts(error, POLICY) == 5
        assert next_delay(error, 4, POLICY, 0.0) == 4.0


def test_a_non_retryable_error_gets_no_delay():
    assert next_delay(ProviderError("fake: HTTP 400", status=400), 1, POLICY, 0.5) is None


async def test_a_local_refusal_makes_two_attempts_and_says_so():
    """Through the wrapper: two calls, one 0.5 s wait, the detail names the cause and the attempt
    out of two, then clears; the error says it gave up after 2 attempts."""
    provider = FakeProvider(([], _refused(LOCAL)), ([], _refused(LOCAL)), (OK, None))
    rec = Recorder()
    with pytest.raises(ProviderError) as info:
        await _drain(provider, rec)
    assert provider.calls == 2
    assert rec.sleeps == [0.5]
    assert rec.details == ["retrying in 0.5 s: connection refused (attempt 2 of 2)", None]
    assert info.value.message == (
        f"fake: nothing is listening at {LOCAL}: is the server running? (gave up after 2 attempts)"
    )


def test_a_refused_connection_is_translated_naming_the_url():
    """The SDK's connection error caused by ECONNREFUSED becomes a refused, retryable ProviderError
    that names the URL nothing listens at."""
    provider = ProviderConfig(name="local", kind="openai", base_url=LOCAL)
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 8080)")
        except ConnectionRefusedError as cause:
            raise ConnectionError("Connection error.") from cause
    except ConnectionError as exc:
        error = translate(exc, provider)
    assert error.refused
    assert error.retryable
    assert error.endpoint == LOCAL
    assert error.message == f"local: nothing is listening at {LOCAL}: is the server running?"

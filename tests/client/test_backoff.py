"""The reconnect schedule, read without waiting it out."""

from __future__ import annotations

from shard.client import Backoff


def test_delays_double_from_1_s_and_stop_at_30_s():
    """Covers: R2.2.6, R2.2.7"""
    assert [Backoff().delay(n) for n in range(8)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert Backoff().delay(10_000) == 30


def test_jitter_only_shortens_and_takes_its_randomness_from_the_caller():
    """Covers: R2.2.7"""
    backoff = Backoff(jitter=0.5, random=lambda: 1.0)
    assert [backoff.delay(n) for n in range(3)] == [0.5, 1.0, 2.0]
    assert Backoff(jitter=0.5, random=lambda: 0.0).delay(9) == 30

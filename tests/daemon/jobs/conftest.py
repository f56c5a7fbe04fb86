"""Fixtures for the job coordinator's rules in process (``shard.testing.broker``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shard.testing.broker import BrokerHarness


@pytest.fixture
def harness() -> Iterator[BrokerHarness]:
    h = BrokerHarness()
    yield h
    assert h.wire_problems() == []

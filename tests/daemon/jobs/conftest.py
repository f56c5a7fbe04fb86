"""Fixtures for the job coordinator's rules in process (``shard.testing.broker``) and for the
scenarios against a real daemon (``jobs.scenekit``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs.scenekit import Scene
from shard.testing.broker import BrokerHarness


@pytest.fixture
def harness() -> Iterator[BrokerHarness]:
    h = BrokerHarness()
    yield h
    assert h.wire_problems() == []


@pytest.fixture
def scene(daemon_factory: Any, home: Path, project: Path) -> Scene:
    """Scenarios against a real daemon (``jobs.scenekit``)."""
    return Scene(daemon_factory, home, project)

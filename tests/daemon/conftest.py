"""Fixtures for tests against a real ``shard daemon`` process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shard.testing.wire import wire_checked


@pytest.fixture(params=["unix", "websocket"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(autouse=True)
def wire_check() -> Iterator[None]:
    """Every message a test client receives from the daemon must be a valid event of `shard schema`
    (and a successful response's data a valid result of its command).

    Covers: R5.0.1, R5.0.2, R5.0.3, R5.1.7
    """
    yield from wire_checked()

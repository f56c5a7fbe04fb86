"""Fixtures of the terminal client's tests: connected clients, closed at the end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import connect

from shard.client import ShardClient


@pytest.fixture
async def client_factory() -> AsyncIterator[Callable[[Path], Any]]:
    made: list[ShardClient] = []

    async def _make(home: Path, first: float = 0.05) -> ShardClient:
        client = await connect(home, first)
        made.append(client)
        return client

    yield _make
    for client in made:
        await client.close()

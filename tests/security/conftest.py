"""A real ``shard daemon`` per test, in its own SHARD_HOME, stopped (and its output complete) after."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import DaemonProcess
from shard.testing.wire import wire_checked


@pytest.fixture
async def start_daemon(tmp_path: Path) -> AsyncIterator[Any]:
    started: list[DaemonProcess] = []

    async def _start(*args: str) -> DaemonProcess:
        daemon = await DaemonProcess.start(tmp_path / "home", *args)
        started.append(daemon)
        return daemon

    yield _start
    for daemon in started:
        await daemon.kill()


@pytest.fixture(autouse=True)
def wire_check() -> Iterator[None]:
    """Every message a test client receives from the daemon must be a valid event of `shard schema`
    (and a successful response's data a valid result of its command).

    Covers: R5.0.1, R5.0.2, R5.0.3, R5.1.7
    """
    yield from wire_checked()

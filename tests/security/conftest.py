"""A real ``shard daemon`` per test, in its own SHARD_HOME, stopped (and its output complete) after."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import DaemonProcess


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

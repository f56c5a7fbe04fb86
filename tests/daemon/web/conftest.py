"""A real ``shard daemon`` per call, each in its own SHARD_HOME (``home``, then ``home-2``, …),
stopped (and its output complete) after the test."""

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
        name = "home" if not started else f"home-{len(started) + 1}"
        daemon = await DaemonProcess.start(tmp_path / name, *args)
        started.append(daemon)
        return daemon

    yield _start
    for daemon in started:
        await daemon.kill()

"""A real ``shard daemon`` per call, each in its own SHARD_HOME (``home``, then ``home-2``, …),
stopped (and its output complete) after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import DaemonProcess
from shard.testing.wire import checking_wire


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


@pytest.fixture(autouse=True)
def wire_check() -> Iterator[None]:
    """Every message a test client receives from the daemon must be a valid event of `shard schema`
    (and a successful response's data a valid result of its command).

    Covers: R5.0.1, R5.0.2, R5.0.3, R5.1.7
    """
    with checking_wire() as check:
        yield
    problems = check.problems()
    assert not problems, "the daemon sent messages that do not validate:\n" + "\n".join(problems)

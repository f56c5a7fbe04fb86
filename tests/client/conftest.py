"""Fixtures for the SDK's tests: a real ``shard daemon`` on a scripted model, in a temp SHARD_HOME."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import DaemonProcess, write_scripted_home

TEST_TOOLS = [
    "shard.testing.tools:SleepTool",
    "shard.testing.tools:TouchTool",
    "shard.testing.tools:AskTool",
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    return root


@pytest.fixture
async def daemon_factory(home: Path) -> AsyncIterator[Any]:
    started: list[DaemonProcess] = []

    async def _start(steps: list[dict[str, Any]] | None = None, *args: str, **opts: Any) -> DaemonProcess:
        if steps is not None:
            opts.setdefault("extensions", TEST_TOOLS)
            write_scripted_home(home, steps, **opts)
        daemon = await DaemonProcess.start(home, *args)
        started.append(daemon)
        return daemon

    yield _start
    for daemon in started:
        await daemon.kill()

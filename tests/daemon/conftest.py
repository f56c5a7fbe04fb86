"""Fixtures for tests against a real ``shard daemon`` process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.wire import wire_checked

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

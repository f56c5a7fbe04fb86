"""Fixtures for tests that spawn real ``shard agent --stdio`` processes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from shard.testing import AgentProcess, write_scripted_home
from shard.testing.tools import TEST_TOOLS as BASE_TOOLS

TEST_TOOLS = [*BASE_TOOLS, "shard.testing.tools:CrashTool"]

Starter = Callable[..., Awaitable[AgentProcess]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "config.json").write_text('{"name": "demo", "port": 8080}\n')
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hello')\n")
    return root


@pytest.fixture
async def start(home: Path, project: Path) -> AsyncIterator[Starter]:
    """``await start(steps, *args, **home_options)``: write the script, spawn, return the process."""
    procs: list[AgentProcess] = []

    async def _start(steps: list[dict[str, Any]] | None = None, *args: str, **opts: Any) -> AgentProcess:
        if steps is not None:
            opts.setdefault("extensions", TEST_TOOLS)
            write_scripted_home(home, steps, **opts)
        proc = await AgentProcess.start(home, project, *args)
        procs.append(proc)
        return proc

    yield _start
    for proc in procs:
        await proc.kill()

"""Fixtures for tests that spawn real ``shard agent --stdio`` processes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from shard.testing import AgentProcess, Runtimes, write_scripted_home
from shard.testing.tools import TEST_TOOLS as BASE_TOOLS

TEST_TOOLS = [*BASE_TOOLS, "shard.testing.tools:CrashTool"]

Starter = Callable[..., Awaitable[AgentProcess]]


def _make_project(root: Path) -> Path:
    root.mkdir()
    (root / "config.json").write_text('{"name": "demo", "port": 8080}\n')
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hello')\n")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _make_project(tmp_path / "project")


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


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def start_shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Starter]:
    """``await start_shared(steps, *args, **home_options)``: like ``start``, for a runtime several tests
    of a module share (each on its own home and project), past its handshake (``greeting``); killed
    when the module ends. Its tests take it through ``AgentProcess.hand_over`` and run in the module's
    event loop (``pytest.mark.asyncio(loop_scope="module")``)."""
    runtimes = Runtimes()

    async def _start(steps: list[dict[str, Any]], *args: str, **opts: Any) -> AgentProcess:
        root = tmp_path_factory.mktemp("shared")
        opts.setdefault("extensions", TEST_TOOLS)
        home = write_scripted_home(root / "home", steps, **opts)
        return await runtimes.start(home, _make_project(root / "project"), *args)

    yield _start
    await runtimes.close()

"""Fixtures shared by the suites that spawn a real ``shard daemon`` (tests/daemon, tests/client…):
a temp SHARD_HOME, a project folder, and ``daemon_factory``. A suite's own conftest may override any
of them (tests/integration has its own ``project``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from assert_cache import precompile
from scheduling import long_modules_first
from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.tools import TEST_TOOLS

# No Hypothesis test is timed: its 200 ms deadline per example and its too-slow health check are
# clocks, and on a loaded machine (six workers on two cores, other jobs beside) an example that
# passes can take longer — test_framing failed so on a full run. A hang is still caught by the
# test kit's caps.
settings.register_profile("shard", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shard")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under xdist, the controller caches the rewritten test modules before the workers start (see
    tests/assert_cache.py): each worker then reads them instead of rewriting all of them."""
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    here = config.invocation_params.dir
    roots = [here / arg.split("::")[0] for arg in config.args]
    existing = [root for root in roots if root.exists()]
    precompile(config.rootpath, existing, pass_hook=bool(config.getini("enable_assertion_pass_hook")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = long_modules_first(items)


@pytest.fixture(autouse=True, scope="module")
def _no_local_runtimes_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module marked ``no_local_runtimes`` starts its daemons (module-scoped ones too) without a warm
    template (``DaemonProcess.cold_by_default``)."""
    with DaemonProcess.cold_while(request.node.get_closest_marker("no_local_runtimes") is not None):
        yield


@pytest.fixture(autouse=True)
def _no_local_runtimes_test(request: pytest.FixtureRequest) -> Iterator[None]:
    with DaemonProcess.cold_while(request.node.get_closest_marker("no_local_runtimes") is not None):
        yield


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
    """``await daemon_factory(steps, *flags, **home_options)``: write the script (with the test
    tools), start a daemon on ``home``; every daemon started is killed at the end."""
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

"""Browser tests: one real daemon with scripted agents per module, one real Chromium per worker, and
per module one browser context enrolled with the link the module's daemon printed (its code posted
as the enrollment page posts it; see ``enrolled_context``). Waits are on DOM state, never sleeps.

Every fixture and test here runs on the session's event loop (``loop_scope="session"``): Playwright's
browser belongs to the loop that launched it, and one launch per worker instead of one per module
saves a Chromium start (seconds on a loaded machine) for every browser module but the first."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import enrolled_context, open_app

from shard.testing import DaemonProcess
from shard.testing.chromium import MISSING, chromium_path, launched


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium() -> AsyncIterator[Any]:
    """Never a skip: without chromium every browser test fails with the one line saying how."""
    if chromium_path() is None:
        pytest.fail(MISSING, pytrace=False)
    async with launched() as browser:
        yield browser


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def context(chromium: Any, daemon: DaemonProcess, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A context enrolled with the module's ``daemon`` (each module starts its own), made with the
    module's ``CONTEXT_OPTIONS`` when it has some (a viewport, ``bypass_csp`` for the axe audit);
    enrolled in a tab through the printed link when the module sets ``ENROLL_IN_A_TAB``."""
    in_a_tab = getattr(request.module, "ENROLL_IN_A_TAB", False)
    options = getattr(request.module, "CONTEXT_OPTIONS", {})
    ctx = await enrolled_context(chromium, daemon, in_a_tab=in_a_tab, **options)
    yield ctx
    await ctx.close()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(context: Any) -> AsyncIterator[Any]:
    """The app open in the module's context (a module that needs another page defines its own)."""
    yield await open_app(context)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root

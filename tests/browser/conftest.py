"""Browser tests: one real daemon with scripted agents and one real Chromium per module, and one
browser context enrolled through the link the daemon printed. Waits are on DOM state, never sleeps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from shard.testing import DaemonProcess
from shard.testing.chromium import MISSING, chromium_path, launched

TIMEOUT_MS = 15_000


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """No silent skip: without chromium every browser test fails with one line saying how to get it."""
    if chromium_path() is None:
        for item in items:
            if "tests/browser" in str(item.path):
                item.add_marker(pytest.mark.usefixtures("_chromium_missing"))


@pytest.fixture
def _chromium_missing() -> None:
    pytest.fail(MISSING, pytrace=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium() -> AsyncIterator[Any]:
    async with launched() as browser:
        yield browser


async def start_daemon(home: Path) -> AsyncIterator[DaemonProcess]:
    daemon = await DaemonProcess.start(home)
    try:
        yield daemon
    finally:
        await daemon.kill()


async def enrolled_context(chromium: Any, daemon: DaemonProcess) -> Any:
    """A browser context (its tabs share the cookie) enrolled through the printed link."""
    from playwright.async_api import expect

    assert daemon.enrollment_link, daemon.output
    context = await chromium.new_context(base_url=f"http://127.0.0.1:{daemon.port}")
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    page = await context.new_page()
    await page.goto(daemon.enrollment_link)
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await page.close()
    return context

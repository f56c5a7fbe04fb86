"""Real Chromium for the web client's browser tests: Playwright for Python driving the system's
Chromium (Debian's packages), never a browser Playwright downloads (``playwright install`` is not
used anywhere). Playwright is a dev dependency, so it is imported only when a browser launches.

The browser is Debian's ``chromium-headless-shell`` when it is installed: the same Chromium build
(Blink, V8, the same version) without the browser's own windowed UI, which ``chromium --headless``
now runs offscreen, and what Playwright itself launches for headless Chromium. On two cores the
browser tests took 196 busy core-seconds with it against 356 with ``chromium``, and 105 s of wall
time against 183 s. ``chromium`` is the fallback.

    async with launched() as browser:          # fails with one line if chromium is missing
        page = await browser.new_page()
        await page.goto(daemon.enrollment_link)  # the real enrollment flow, then the app at /
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# Without the background-networking flags Chromium opens many outbound connections of its own;
# on a machine without internet they are refused and slow every start.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
MISSING = (
    "chromium is needed for the browser tests: install it with "
    "`apt-get install -y chromium-headless-shell` (./test does this itself when run as root), "
    "or point SHARD_CHROMIUM at a chromium binary"
)
_ON_PATH = ("chromium-headless-shell", "chromium", "chromium-browser")  # the first found is driven


def chromium_path() -> str | None:
    """The chromium binary to drive: ``$SHARD_CHROMIUM``, else the first of ``_ON_PATH`` found."""
    explicit = os.environ.get("SHARD_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return next((found for name in _ON_PATH if (found := shutil.which(name))), None)


def screenshot_dir() -> Path:
    """Where browser tests save screenshots: ``$SHARD_TEST_OUTPUT/screenshots`` (default
    ``test-output/screenshots`` in the working directory, which git ignores)."""
    root = Path(os.environ.get("SHARD_TEST_OUTPUT", "test-output"))
    path = root / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@asynccontextmanager
async def launched() -> AsyncIterator[Any]:
    """A headless system Chromium under Playwright; raises RuntimeError(MISSING) without one."""
    path = chromium_path()
    if path is None:
        raise RuntimeError(MISSING)
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=path, headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            yield browser
        finally:
            await browser.close()

"""An interrupted reply looks interrupted in the web client (issue 26 item 4): Abort mid-reply
leaves the partial text with a small muted "Stopped by you" under it — live, from
``message_complete``, and after a reload, from the ``sync`` window — in real Chromium against a
real daemon whose scripted agent stalls mid-reply."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import assistant_text, create_agent, open_app, screenshot, select_agent, send, start_daemon
from playwright.async_api import expect

from shard.testing import DaemonProcess, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

STALLED = {"blocks": [{"type": "text", "text": "The first half of"}], "stall": True}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = tmp_path_factory.mktemp("web-stops") / "home"
    write_scripted_home(home, [STALLED])
    async for started in start_daemon(home):
        yield started


def marker(page: Any) -> Any:
    return page.locator("#conversation .message.assistant", has_text="The first half of").locator(
        ".stop-reason"
    )


async def test_an_aborted_reply_shows_its_marker_live_and_after_a_reload(context: Any, project: Path):
    """Covers: R9.2.7, R9.4.8, R9.1.4"""
    page = await open_app(context)
    agent = await create_agent(page, project)
    await send(page, "tell me everything")
    await expect(assistant_text(page, "The first half of")).to_have_count(1)
    await expect(marker(page)).to_have_count(0)  # streaming: nothing says it ended
    await page.get_by_role("button", name="Abort").click()
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await expect(marker(page)).to_have_text("Stopped by you")
    await screenshot(page, "26-stopped-by-you")

    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await select_agent(page, agent)
    await expect(assistant_text(page, "The first half of")).to_have_count(1)
    await expect(marker(page)).to_have_text("Stopped by you")
    await page.close()

"""What is queued above the prompt box, in real Chromium against a real daemon (issue 26 item 3): a
steer or follow-up sent while a turn streams shows as queued at once, Withdraw takes it back (the model
never sees it), a reload mid-turn shows the queue again (from ``sync``), and an abort gives the
queued text back — into an empty box, or as "Not sent" with Put back beside text being typed.

Each agent's model streams a few words and then stalls until aborted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from browser_steps import assistant_text, create_agent, open_app, screenshot, select_agent, send, start_daemon
from playwright.async_api import expect

from shard.testing import DaemonProcess, recorded_requests, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

STALLED = {"blocks": [{"type": "text", "text": "working on it"}], "stall": True}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scripted_home(tmp_path_factory.mktemp("web-queue") / "home", [STALLED, STALLED, STALLED])


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(home: Path) -> AsyncIterator[DaemonProcess]:
    async for started in start_daemon(home):
        yield started


async def _streaming(page, text: str, answers: int = 1) -> None:
    await send(page, text)
    await expect(assistant_text(page, "working on it")).to_have_count(answers)


async def _queue(page, text: str, button: str) -> None:
    await page.fill("#prompt-text", text)
    await page.get_by_role("button", name=button, exact=True).click()
    await expect(page.locator("#prompt-text")).to_have_value("")


def _queued(page):
    return page.locator("#queue .queued")


async def test_a_queued_message_shows_at_once_can_be_withdrawn_and_survives_a_reload(context, project, home):
    """Steer: the message shows queued ("Steer") before anything delivers it; Withdraw takes it and the
    model never gets it. Follow up: "After this turn"; after a reload mid-turn the page shows it
    again, from the re-attach's ``sync``; Edit takes it back into the box.

    Covers: R9.2.4, R9.2.5, R6.4.20, R6.4.18
    """
    page = await open_app(context)
    agent = await create_agent(page, project)
    await _streaming(page, "start")
    await _queue(page, "also the port", "Steer")
    await expect(_queued(page)).to_have_count(1)
    await expect(_queued(page).first).to_contain_text("Steer")
    await expect(_queued(page).first).to_contain_text("also the port")
    await screenshot(page, "26-queued-steer")
    await page.get_by_role("button", name="Withdraw queued message: also the port").click()
    await expect(_queued(page)).to_have_count(0)
    await expect(page.locator("#queue")).to_be_hidden()

    await _queue(page, "then the tests", "Follow up")
    await expect(_queued(page)).to_have_count(1)
    await expect(_queued(page).first).to_contain_text("After this turn")
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await select_agent(page, agent)
    await expect(_queued(page)).to_have_count(1)
    await expect(_queued(page).first).to_contain_text("then the tests")
    await page.get_by_role("button", name="Edit queued message: then the tests").click()
    await expect(_queued(page)).to_have_count(0)
    await expect(page.locator("#prompt-text")).to_have_value("then the tests")
    await page.get_by_role("button", name="Abort", exact=True).click()
    await expect(page.locator("#agent-status")).to_have_text("idle")
    sent = json.dumps(recorded_requests(home))
    assert "also the port" not in sent
    assert "then the tests" not in sent
    await page.close()


async def test_abort_gives_the_queued_text_back_without_overwriting_the_box(context, project, home):
    """Abort with a follow-up queued and the box empty: the follow-up's text is back in the box.
    Abort with a steer queued while the person types something else: the box keeps what they typed,
    the steer shows "Not sent" and Put back appends it.

    Covers: R9.2.7, R9.2.4, R9.2.5
    """
    page = await open_app(context)
    await create_agent(page, project)
    await _streaming(page, "start")
    await _queue(page, "then the tests", "Follow up")
    await expect(_queued(page)).to_have_count(1)
    await page.get_by_role("button", name="Abort", exact=True).click()
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await expect(page.locator("#prompt-text")).to_have_value("then the tests")
    await expect(_queued(page)).to_have_count(0)

    await page.fill("#prompt-text", "")
    await _streaming(page, "once more", answers=2)
    await _queue(page, "also the port", "Steer")
    await page.fill("#prompt-text", "a new thought")
    await page.get_by_role("button", name="Abort", exact=True).click()
    returned = page.locator("#queue .returned")
    await expect(returned).to_have_count(1)
    await expect(returned).to_contain_text("Not sent")
    await expect(returned).to_contain_text("also the port")
    await expect(page.locator("#prompt-text")).to_have_value("a new thought")
    await screenshot(page, "26-not-sent")
    await returned.get_by_role("button", name="Put back").click()
    await expect(page.locator("#prompt-text")).to_have_value("a new thought\n\nalso the port")
    await expect(returned).to_have_count(0)
    await page.close()

"""The web client never waits silently: a provider retry shows next to the agent's status as it
happens — the delay and the cause in words — after a reload too, and goes when the wait is over
(the retried call answers, or an abort ends it). Real Chromium against a real daemon whose provider
is a local server answering 503 with a Retry-After."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from browser_steps import assistant_text, create_agent, open_app, screenshot, select_agent, send, start_daemon
from playwright.async_api import expect

from agent.providers._server import Fail, ProviderServer, Stream
from agent.providers._support import provider_toml, write_home
from shard.testing import DaemonProcess

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

RETRY = "[retry]\nmax_attempts = 3\nbase_delay = 0.01\nmax_delay = 60\n"  # Retry-After is honoured
BUSY = {"error": {"message": "The server is busy.", "type": "server_error"}}

# Every text the detail shows, in order, recorded in the page as it changes (nothing is missed
# between two looks of the test).
RECORD = """() => {
  const el = document.getElementById("agent-detail");
  window.shownDetails = [];
  new MutationObserver(() => window.shownDetails.push(el.hidden ? "" : el.textContent))
    .observe(el, { childList: true, characterData: true, subtree: true, attributes: true });
}"""


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def server() -> AsyncIterator[ProviderServer]:
    started = await ProviderServer.start()
    try:
        yield started
    finally:
        await started.close()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(
    tmp_path_factory: pytest.TempPathFactory, server: ProviderServer
) -> AsyncIterator[DaemonProcess]:
    body = provider_toml("local", "openai", server.openai_url, '[{ id = "m" }]', key_env=None)
    home = write_home(
        tmp_path_factory.mktemp("web-waiting") / "home", body, default_model="local/m", retry=RETRY
    )
    async for started in start_daemon(home):
        yield started


async def test_a_provider_retry_shows_beside_the_status_until_it_is_over(
    context, project: Path, server: ProviderServer
):
    """Covers: R9.1.19, R6.4.20"""
    server.replies.append(Fail(503, BUSY, {"retry-after": "20"}))
    page = await open_app(context)
    agent = await create_agent(page, project)
    detail = page.locator("#agent-detail")
    await expect(detail).to_be_hidden()
    await send(page, "hello")
    await expect(detail).to_have_text("retrying in 20.0 s: HTTP 503 (attempt 2 of 3)")
    await expect(detail).to_be_visible()
    await expect(page.locator("#agent-status")).to_have_text("working")
    await screenshot(page, "30-retrying")

    await page.reload()  # a page opened mid-wait: its sync says it
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await select_agent(page, agent)
    await expect(detail).to_have_text("retrying in 20.0 s: HTTP 503 (attempt 2 of 3)")

    await page.get_by_role("button", name="Abort").click()  # the abort ends the wait
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await expect(detail).to_be_hidden()
    assert len(server.requests) == 1

    server.replies.extend([Fail(503, BUSY, {"retry-after": "1"}), Stream("openai/text.sse")])
    await page.evaluate(RECORD)
    await send(page, "again")
    await expect(assistant_text(page, "Hello, world!")).to_have_count(1)
    await expect(detail).to_be_hidden()  # the retried call answered
    shown = await page.evaluate("() => window.shownDetails")
    assert "retrying in 1.0 s: HTTP 503 (attempt 2 of 3)" in shown, shown
    assert shown[-1] == ""
    await page.close()

"""Auto-scroll (issue 29): while a reply streams the conversation follows it, as long as the reader
is at the bottom; scrolled up, the reader's place holds however much arrives; back at the bottom, it
follows again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import create_agent, enrolled_context, open_app, send, start_daemon
from playwright.async_api import expect

from shard.testing import DaemonProcess, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

LONG = "".join(f"line {n} of a long streamed answer\n\n" for n in range(200))
SCRIPT = [{"blocks": [{"type": "text", "text": LONG}], "chunk": 24, "delay_ms": 15}]
GAP = "el => el.scrollHeight - el.scrollTop - el.clientHeight"
GROWS = "([n]) => document.querySelector('#conversation .message.streaming').textContent.length > n"
LENGTH = "() => document.querySelector('#conversation .message.streaming').textContent.length"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-scroll") / "home", SCRIPT)
    async for started in start_daemon(home):
        yield started


async def grown(page: Any) -> None:
    """Until the streaming reply has grown by a few deltas."""
    await page.wait_for_function(GROWS, arg=[await page.evaluate(LENGTH) + 200])


async def test_the_conversation_follows_a_stream_until_the_reader_scrolls_up(chromium, daemon, project):
    context = await enrolled_context(chromium, daemon)
    page = await open_app(context)
    await page.set_viewport_size({"width": 1400, "height": 700})
    await create_agent(page, project)
    await send(page, "tell me a long story")
    conversation = page.locator("#conversation")
    await page.wait_for_function(
        "() => { const el = document.getElementById('conversation');"
        " return el.scrollHeight > el.clientHeight + 600; }"
    )
    await grown(page)
    await page.wait_for_function(f"() => ({GAP})(document.getElementById('conversation')) < 90")  # follows
    await conversation.evaluate("el => { el.scrollTop = el.scrollTop - 400; }")
    held = await conversation.evaluate("el => el.scrollTop")
    await grown(page)
    await grown(page)
    assert await conversation.evaluate("el => el.scrollTop") == held  # the reader's place holds
    assert await conversation.evaluate(GAP) > 400
    await conversation.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    await grown(page)
    await page.wait_for_function(
        f"() => ({GAP})(document.getElementById('conversation')) < 90"
    )  # follows again
    await expect(page.locator("#conversation .message.assistant:not(.streaming)")).to_have_count(
        1, timeout=60_000
    )
    await context.close()

"""A 3000-message session in real Chromium against a real daemon: written through the project's
own session writer, opened from the session list as a new agent, it renders a bounded window;
scrolling up and "Show earlier messages" render earlier pages; a streaming answer re-creates no
other message element. The scripted model loops, so the 1501st answer exists. And while an agent
streams, the keyboard focus stays on the agent list where the reader put it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    assistant_text,
    create_agent,
    open_app,
    open_session,
    screenshot,
    select_agent,
    send,
    start_daemon,
    write_session,
)
from playwright.async_api import expect

from shard.testing import write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

MESSAGES = 3000
WINDOW = 100  # FIRST_WINDOW and PAGE of render/conversation.js
SCRIPT = [
    {
        "blocks": [
            {"type": "text", "text": "streaming now"},
            {"type": "pause", "ms": 1500},
            {"type": "text", "text": ", and done"},
        ]
    }
]
MARK = "els => els.forEach(e => { e.marked = true; })"
MARKED = "els => els.filter(e => e.marked).length"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    home = tmp_path_factory.mktemp("web-long") / "home"
    models = [{"id": "m", "context_window": 10_000_000}]
    write_scripted_home(home, SCRIPT, loop=True, models=models, record=False)
    async for started in start_daemon(home):
        yield started


async def test_a_long_session_opens_windowed_loads_earlier_and_streams_without_re_rendering(
    context, daemon, tmp_path
):
    """Opened from the list, the 3000-message session shows its last 100 messages (and a "Show
    earlier messages" row), not 3000; scrolling to the top renders 100 more above, keeping the ones
    shown; the button renders 100 more; a streamed answer adds its own element and re-creates none
    of the others, while it streams and once complete.

    Covers: R9.4.7, R6.4.21
    """
    project = tmp_path / "project"
    project.mkdir()
    texts = [f"message {i}" for i in range(MESSAGES)]
    session = write_session(daemon.home, project, texts)
    page = await open_app(context)
    await create_agent(page, project)
    await open_session(page, session)
    conversation = page.locator("#conversation")
    messages = conversation.locator(":scope > .message")
    await expect(messages.last.locator(".text")).to_have_text(f"message {MESSAGES - 1}")
    await expect(messages).to_have_count(WINDOW)
    await expect(messages.first.locator(".text")).to_have_text(f"message {MESSAGES - WINDOW}")
    await expect(conversation.get_by_role("button", name="Show earlier messages")).to_be_visible()
    await messages.evaluate_all(MARK)

    await conversation.evaluate("el => { el.scrollTop = 0; }")
    await expect(messages).to_have_count(2 * WINDOW)
    await expect(messages.first.locator(".text")).to_have_text(f"message {MESSAGES - 2 * WINDOW}")
    assert await messages.evaluate_all(MARKED) == WINDOW  # the shown ones stayed, none re-created
    assert await conversation.evaluate("el => el.scrollTop") > 0  # the reader's place is kept
    # a real click would first scroll the row into view, and reaching the top loads a page by itself
    await conversation.get_by_role("button", name="Show earlier messages").dispatch_event("click")
    await expect(messages).to_have_count(3 * WINDOW)
    await screenshot(page, "13-long-session")

    await messages.evaluate_all(MARK)
    await send(page, "go on")
    streaming = conversation.locator(".message.streaming .text")
    await expect(streaming).to_have_text("streaming now")
    assert await messages.evaluate_all(MARKED) == 3 * WINDOW
    await expect(assistant_text(page, "streaming now, and done")).to_have_count(1)
    await expect(messages).to_have_count(3 * WINDOW + 2)  # the prompt and the answer
    assert await messages.evaluate_all(MARKED) == 3 * WINDOW
    await page.close()


async def test_the_focus_stays_on_the_agent_list_while_an_agent_streams(context, tmp_path):
    """A keyboard user on the streaming agent's row keeps the focus there while the answer
    streams and completes: the row's controls are updated in place, not re-created per event.

    Covers: R9.4.7
    """
    project = tmp_path / "project"
    project.mkdir()
    page = await open_app(context)
    agent = await create_agent(page, project)
    await send(page, "go on")
    await expect(page.locator("#conversation .message.streaming .text")).to_have_text("streaming now")
    row = page.locator(f'.agent-row[data-agent-id="{agent}"]')
    await row.locator(".agent-open").focus()
    await page.evaluate("() => { document.activeElement.marked = true; }")
    await expect(assistant_text(page, "streaming now, and done")).to_have_count(1)
    await expect(row).to_have_attribute("data-status", "idle")
    await expect(row.locator(".usage")).to_contain_text(" out")
    assert await page.evaluate("() => document.activeElement.marked === true")
    await expect(row.locator(".agent-open")).to_be_focused()


async def test_switching_agents_returns_to_where_the_reader_was(context, daemon, tmp_path):
    """Back to a long conversation after looking at another agent: the reader is at its end again
    (where they left it), and nothing more was rendered on the way.

    Covers: R9.4.7
    """
    project = tmp_path / "project"
    project.mkdir()
    session = write_session(daemon.home, project, [f"line {i}" for i in range(2 * WINDOW)])
    page = await open_app(context)
    source = await create_agent(page, project)
    long = await open_session(page, session)
    messages = page.locator("#conversation > .message")
    await expect(messages).to_have_count(WINDOW)
    await expect(messages.last).to_be_in_viewport()
    await select_agent(page, source)
    await select_agent(page, long)
    await expect(messages.last.locator(".text")).to_have_text(f"line {2 * WINDOW - 1}")
    await expect(messages.last).to_be_in_viewport()
    await expect(messages).to_have_count(WINDOW)

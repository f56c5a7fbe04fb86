"""A reloaded conversation shows what the live one showed, in the web client (issue 26 item 5): the
write's diff, the bash call's exit code and duration, who answered each permission request and
how, and the turn's usage — the same cards and lines after a page reload, from the ``sync`` window,
in real Chromium against a real daemon."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    assistant_text,
    create_agent,
    open_app,
    permission,
    screenshot,
    select_agent,
    send,
    start_daemon,
)
from playwright.async_api import expect

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

STEPS = [
    tool_step("write", {"path": "plan.txt", "content": "step one\nstep two\n"}, "Writing the plan."),
    tool_step("bash", {"command": "echo ran; exit 2"}),
    text_step("Planned."),
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = tmp_path_factory.mktemp("web-reload") / "home"
    write_scripted_home(home, STEPS)
    async for started in start_daemon(home):
        yield started


async def turn_view(page: Any) -> list[str]:
    """What the turn shows: each tool card's text and the usage line, in order."""
    shown = page.locator("#conversation .tool, #conversation .turn-usage")
    return [" ".join(text.split()) for text in await shown.all_inner_texts()]


async def test_a_turn_shows_the_same_cards_after_a_reload(context: Any, project: Path):
    """Covers: R6.4.20, R6.4.21, R9.4.2, R9.4.10, R9.4.14, R9.4.16, R9.5.14"""
    page = await open_app(context)
    agent = await create_agent(page, project)
    await send(page, "plan it")
    for _ in range(2):  # the write, then the bash call
        dialog = permission(page)
        await expect(dialog).to_have_count(1)
        request_id = await dialog.get_attribute("data-request-id")
        await dialog.get_by_role("button", name="Allow once").click()
        await expect(page.locator(f'#requests [data-request-id="{request_id}"]')).to_have_count(0)
    await expect(assistant_text(page, "Planned.")).to_have_count(1)
    await expect(page.locator("#conversation .turn-usage")).to_have_count(1)
    live = await turn_view(page)
    await screenshot(page, "26-turn-live")

    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await select_agent(page, agent)
    await expect(assistant_text(page, "Planned.")).to_have_count(1)
    await expect(page.locator("#conversation .turn-usage")).to_have_count(1)
    assert await turn_view(page) == live
    await screenshot(page, "26-turn-reloaded")

    write, bash, usage = live
    assert "+step one +step two" in write  # the diff
    assert "Created plan.txt (2 lines" in write
    assert "Allowed by you" in write  # this tab answered: it still knows its ids after the reload
    assert "Allowed by you" in bash
    assert "↳ exit 2 · " in bash  # exit code and duration
    assert usage.startswith("turn: ")
    await page.close()


PAGED = """async () => {
  const { Conversation, FIRST_WINDOW } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  const messages = [], turns = [];
  for (let i = 0; i < 2 * FIRST_WINDOW + 20; i++) {
    const role = i % 2 ? 'assistant' : 'user';
    messages.push({ id: `m${i}`, role, content: [{ type: 'text', text: `${i}` }] });
    const usage = { input: i, output: 1 };
    if (role === 'assistant') turns.push({ turn_id: `t${i}`, last_message_id: `m${i}`, usage });
  }
  const order = () =>
    [...conv.el.children].map((li) => (li.dataset.turn ? `usage ${li.dataset.turn}` : li.dataset.id));
  conv.sync({ messages, turns });
  const first = order();
  conv.showEarlier();
  conv.showEarlier();
  const paged = order();
  conv.sync({ messages, turns });  // a resync adds nothing
  return { first, paged, again: order(), usage: conv.el.querySelector('.turn-usage').textContent };
}"""


async def test_each_turns_usage_follows_its_last_message_as_earlier_pages_are_shown(context: Any):
    """The window's turns place each usage line after the turn's last message: in the first rendered
    page, in the pages "Show earlier messages" adds above, and once only across a resync.

    Covers: R9.4.2, R6.4.21
    """
    page = await open_app(context)
    result = await page.evaluate(PAGED)
    expected = [x for i in range(220) for x in ([f"m{i}"] + ([f"usage t{i}"] if i % 2 else []))]
    assert result["first"] == [None, *expected[-150:]]  # the "show earlier" row, then the last 100
    assert result["paged"] == result["again"] == expected
    assert result["usage"] == "turn: 1 in · 1 out"
    await page.close()

"""The orchestrator list and the session list, in real Chromium against a real daemon with
scripted agents: terminate from the list, a runtime that dies, seen in two tabs; a session from the
list and a fork, each opened as a new agent."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    assistant_text,
    create_agent,
    open_app,
    open_session,
    runtime_pid,
    screenshot,
    select_agent,
    send,
    start_daemon,
    write_session,
)
from playwright.async_api import expect

from shard.testing import DaemonProcess, text_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [text_step("done one"), text_step("done two")]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scripted_home(tmp_path_factory.mktemp("web-agents") / "home", SCRIPT)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(home: Path) -> AsyncIterator[DaemonProcess]:
    async for started in start_daemon(home):
        yield started


def row(page: Any, agent: str) -> Any:
    return page.locator(f'.agent-row[data-agent-id="{agent}"]')


async def test_terminate_from_the_list_and_a_dead_runtime_show_in_every_tab(context, project, home):
    """Terminate on an agent's row stops its runtime: the row says stopped in this tab and in a
    second one (agent_status_changed). A runtime killed from outside is failed in both lists
    (agent_exited), and the conversation of the tab that watches it says the runtime exited.

    Covers: R10.1.1, R6.4.11, R6.4.10, R12.4.1
    """
    one = await open_app(context)
    first = await create_agent(one, project)
    second = await create_agent(one, project)
    two = await open_app(context)
    await expect(two.locator("#agent")).to_be_hidden()  # nothing selected in this tab yet
    await expect(two.locator("#empty")).to_be_visible()
    for page in (one, two):
        await expect(row(page, first)).to_have_attribute("data-runtime", "running")
        await expect(row(page, first).locator(".badge.runtime")).to_have_count(0)
    await row(one, first).get_by_role("button", name="Terminate").click()
    for page in (one, two):
        await expect(row(page, first)).to_have_attribute("data-runtime", "stopped")
        await expect(row(page, first).locator(".badge.runtime")).to_have_text("stopped")
        await expect(row(page, first).get_by_role("button", name="Terminate")).to_be_disabled()
        await expect(row(page, second)).to_have_attribute("data-runtime", "running")
    session = await one.evaluate("id => window.shard.agents.get(id).sessionId", second)
    os.kill(runtime_pid(home, session), signal.SIGKILL)
    for page in (one, two):
        await expect(row(page, second)).to_have_attribute("data-runtime", "failed")
        await expect(row(page, second).locator(".badge.runtime")).to_have_text("failed")
        for agent in (first, second):  # a part a row leaves out is not written as "null"
            await expect(row(page, agent)).not_to_contain_text("null")
    await expect(one.locator("#conversation .note-error")).to_contain_text("The runtime exited")
    await screenshot(two, "11-stopped-and-failed")
    await one.close()
    await two.close()


async def test_a_session_from_the_list_and_a_fork_open_as_new_agents(context, project, home):
    """A session of this folder not bound to any agent is listed and opens as a new agent showing
    its messages; a fork made from a message opens the same way, with the messages up to it.

    Covers: R9.2.43, R9.2.60, R9.2.66
    """
    written = write_session(home, project, ["an old question", "an old answer"])
    page = await open_app(context)
    source = await create_agent(page, project)
    await send(page, "first prompt")
    await expect(assistant_text(page, "done one")).to_have_count(1)
    opened = await open_session(page, written)
    assert opened != source
    conversation = page.locator("#conversation")
    await expect(conversation.locator(".message .text")).to_have_text(["an old question", "an old answer"])
    await select_agent(page, source)
    await page.locator("#conversation .message.user").first.get_by_role("button", name="Fork").click()
    await expect(page.locator(".toast")).to_contain_text("Forked into session")
    fork_row = page.locator("#sessions .fork-row")
    await expect(fork_row).to_have_count(1)
    fork = await fork_row.get_attribute("data-session-id")
    await page.get_by_role("button", name="Sessions").click()  # open_session opens the list again
    await expect(page.locator("#sessions")).to_be_hidden()
    forked = await open_session(page, fork)
    assert forked not in (source, opened)
    await expect(conversation.locator(".message.user .text")).to_have_text(["first prompt"])
    for agent in (source, opened, forked):
        await expect(row(page, agent)).to_have_count(1)
    await screenshot(page, "12-fork-opened")
    await page.close()

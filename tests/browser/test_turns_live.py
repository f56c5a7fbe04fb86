"""A running turn driven from the page, in real Chromium against a real daemon with scripted agents:
steer into the running turn, the "needs an answer" badge of an agent not selected, the reasoning
picker and the Compact button through the daemon, and tool cards with their render previews across
a dropped WebSocket.

Every agent plays the same script from its start, so each test creates its own agent. The first
step writes a file with the built-in ``write`` tool, which asks permission (build mode) and carries
a diff RenderDescriptor on its ``tool_call``."""

from __future__ import annotations

import re
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

from shard.testing import DaemonProcess, recorded_requests, text_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [
    {
        "blocks": [
            {"type": "text", "text": "I will write a.txt"},
            {"type": "tool_call", "name": "write", "args": {"path": "a.txt", "content": "hello\n"}},
        ]
    },
    text_step("done one"),
    text_step("done two"),
]
MODELS = [{"id": "m", "context_window": 100_000, "reasoning_levels": ["low", "high"]}]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("web-turns") / "home"
    # a tiny kept tail, so a manual compaction of a one-turn session has something to summarize
    return write_scripted_home(
        home, SCRIPT, models=MODELS, extra_toml="\n[compaction]\nkeep_recent_tokens = 10\n"
    )


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(home: Path) -> AsyncIterator[DaemonProcess]:
    async for started in start_daemon(home):
        yield started


def allow(page: Any) -> Any:
    return permission(page).get_by_role("button", name="Allow once")


def row(page: Any, agent: str) -> Any:
    return page.locator(f'.agent-row[data-agent-id="{agent}"]')


async def drop_and_resume(page: Any) -> None:
    await page.evaluate("() => window.shard.conn.drop()")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "reconnecting")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")


def texts_of(requests: list[dict[str, Any]], index: int) -> list[tuple[str, str]]:
    """(role, first text or block type) of each message of one recorded provider request."""
    out = []
    for message in requests[index]["messages"]:
        block = message["content"][0]
        out.append((message["role"], block.get("text") or block["type"]))
    return out


async def test_a_steer_sent_while_a_turn_runs_joins_that_turn(context, project, home):
    """While the turn waits on a permission, Steer sends the typed text; once the tool has run the
    steered message shows in the conversation after the tool card and before the answer, the model
    saw it in the same turn's next call, and the turn ends once (one usage line).

    Covers: R9.2.4, R9.2.6, R9.4.2
    """
    page = await open_app(context)
    await create_agent(page, project)
    await send(page, "make a.txt")
    await expect(permission(page)).to_have_count(1)
    await page.fill("#prompt-text", "and say hi after")
    await page.get_by_role("button", name="Steer", exact=True).click()
    await expect(page.locator("#prompt-text")).to_have_value("")
    steered = page.locator("#conversation .message.user .text", has_text="and say hi after")
    await expect(steered).to_have_count(0)  # delivered only when the turn reaches its next model call
    await allow(page).click()
    await expect(assistant_text(page, "done one")).to_have_count(1)
    await expect(page.locator("#agent-status")).to_have_text("idle")
    conversation = page.locator("#conversation")
    order = await conversation.locator(":scope > li:not([hidden])").evaluate_all(
        "els => els.map(e => !e.classList.contains('message') ? e.className"
        " : e.querySelector('.text').textContent + (e.querySelector('.tool') ? ' +tool' : ''))"
    )
    assert order == ["make a.txt", "I will write a.txt +tool", "and say hi after", "done one", "turn-usage"]
    await expect(conversation.locator(".tool .tool-answer")).to_have_text("Allowed by you")
    await expect(conversation.locator(".turn-usage")).to_have_count(1)
    requests = [r for r in recorded_requests(home) if r["purpose"] != "summary"]
    last = texts_of(requests, -1)
    assert last[-2:] == [("user", "tool_result"), ("user", "and say hi after")]
    await screenshot(page, "08-steered")
    await page.close()


async def test_an_agent_waiting_on_a_question_is_badged_until_answered_in_every_tab(context, project):
    """An agent not selected that waits on a permission shows "needs an answer" in the list of this
    tab (which watches it) and of a tab that never attached it; selecting it shows the dialog;
    answering clears the badge in both tabs.

    Covers: R6.3.1, R6.3.6, R12.2.3
    """
    one = await open_app(context)
    asking = await create_agent(one, project)
    # a hidden tab with notifications allowed is told when an agent asks (issue 29)
    await one.evaluate(
        """() => { window.notified = [];
        window.Notification = class { static permission = 'granted';
          constructor(title, options) { window.notified.push([title, options.body]); } close() {} };
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => true }); }"""
    )
    await send(one, "make a.txt")
    await expect(permission(one)).to_have_count(1)
    await one.wait_for_function("() => window.notified.length === 1")
    assert (await one.evaluate("() => window.notified"))[0][0].endswith(" needs an answer")
    await one.evaluate("() => { delete document.hidden; }")
    other = await create_agent(one, project)
    await expect(permission(one)).to_have_count(0)
    two = await open_app(context)
    for page in (one, two):
        await expect(row(page, asking).locator(".badge.attention")).to_have_text("needs an answer")
        await expect(row(page, other).locator(".badge.attention")).to_have_count(0)
    for page in (one, two):  # the tab's title counts the agents not in view that wait (issue 29)
        await expect(page).to_have_title("(1) Shard")
    await screenshot(two, "09-needs-an-answer")
    await select_agent(one, asking)
    await expect(permission(one)).to_have_count(1)
    await expect(row(one, asking).locator(".badge.attention")).to_have_count(0)  # the dialog says it
    await allow(one).click()
    await expect(assistant_text(one, "done one")).to_have_count(1)
    await select_agent(one, other)
    for page in (one, two):
        await expect(row(page, asking)).to_have_attribute("data-status", "idle")
        await expect(row(page, asking).locator(".badge.attention")).to_have_count(0)
        await expect(page).to_have_title("Shard")
    await one.close()
    await two.close()


async def test_the_reasoning_picker_switches_through_the_daemon(context, project, home):
    """The active model has reasoning levels, so sync advertises reasoning-catalog and the picker is
    built from list_reasoning_levels; a choice in one tab reaches the other through
    reasoning_level_changed, and the next provider call uses it.

    Covers: R9.2.31, R9.2.32, R9.2.39, R9.2.42, R7.10
    """
    one = await open_app(context)
    agent = await create_agent(one, project)
    two = await open_app(context)
    await select_agent(two, agent)
    for page in (one, two):
        picker = page.locator(".reasoning-picker")
        await expect(picker).to_be_enabled()
        await expect(picker).to_have_value("low")
        assert await picker.locator("option").all_inner_texts() == ["low", "high"]
    await one.select_option(".reasoning-picker", "high")
    await expect(two.locator(".reasoning-picker")).to_have_value("high")
    before = len(recorded_requests(home))
    await send(two, "think hard")
    await expect(permission(two)).to_have_count(1)
    (request,) = recorded_requests(home)[before:]
    assert request["reasoning"] == "high"
    await allow(two).click()
    await expect(assistant_text(two, "done one")).to_have_count(1)
    await one.close()
    await two.close()


async def test_compact_shows_a_marker_and_the_window_after_a_resync(context, project):
    """Compact is offered once the agent is synced and disabled while a turn runs; pressed when idle
    it runs session_op compact and the compaction event leaves a marker; after a reconnect the
    synced window starts with that compaction's marker and summary.

    Covers: R9.2.43, R9.2.45, R9.2.54, R9.4.19, R6.4.21
    """
    page = await open_app(context)
    await create_agent(page, project)
    compact = page.get_by_role("button", name="Compact")
    await expect(compact).to_be_enabled()
    await send(page, "make a.txt")
    await expect(permission(page)).to_have_count(1)
    await expect(compact).to_be_disabled()
    await allow(page).click()
    await expect(assistant_text(page, "done one")).to_have_count(1)
    await expect(compact).to_be_enabled()
    await compact.click()
    marker = page.locator("#conversation .compaction-marker")
    await expect(marker).to_have_text(re.compile(r"^Compacted: \d+ → \d+ tokens$"))
    await expect(page.locator(".toast", has_text="Compacted ")).to_have_count(1)
    await screenshot(page, "10-compacted")
    await drop_and_resume(page)
    await expect(marker).to_have_count(1)
    await expect(marker).to_have_class("compaction-marker from-sync")
    first = page.locator("#conversation .message").first
    await expect(first).to_contain_text("Summary of the earlier conversation")
    await page.close()


async def expect_diffs(card: Any) -> None:
    await expect(card.locator(".tool-render .render-diff .add")).to_have_text("+hello")
    await expect(card.locator(".tool-render")).to_be_hidden()
    await expect(card.locator(".tool-result .render-diff .add")).to_have_text("+hello")
    await expect(card.locator(".render-diff:visible")).to_have_count(1)
    await expect(card.locator(".result-text")).to_contain_text("a.txt")


async def test_tool_cards_and_render_previews_survive_a_resync(context, project):
    """The socket drops while the permission is pending and again after the tool ran: after each
    reconnect there is one tool card, with its diff (the RenderDescriptors of tool_call and
    tool_result, which sync does not carry: the result's supersedes the start-time preview, which
    stays in the card, hidden) and its result.

    Covers: R6.4.21, R9.4.10, R11.0.6
    """
    page = await open_app(context)
    await create_agent(page, project)
    await send(page, "make a.txt")
    await expect(permission(page)).to_have_count(1)
    await drop_and_resume(page)
    await allow(page).click()
    await expect(assistant_text(page, "done one")).to_have_count(1)
    card = page.locator("#conversation .tool")
    await expect(card).to_have_count(1)
    await expect_diffs(card)
    await drop_and_resume(page)
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await send(page, "again")
    await expect(assistant_text(page, "done two")).to_have_count(1)
    await expect(card).to_have_count(1)
    await expect_diffs(card)
    await expect(card).to_have_attribute("data-state", "done")
    await page.close()


async def test_a_watched_agent_not_on_screen_keeps_each_card_in_its_message(context, project):
    """A turn runs in an agent this tab watches but does not show (answered in a second tab); when
    the tab shows it, the tool card is inside its assistant message, in order, with nothing extra.

    Covers: R4.1.2.29, R12.4.2, R9.4.9
    """
    one = await open_app(context)
    watched = await create_agent(one, project)
    await send(one, "make a.txt")
    await expect(permission(one)).to_have_count(1)
    await create_agent(one, project)
    two = await open_app(context)
    await select_agent(two, watched)
    await allow(two).click()
    await expect(assistant_text(two, "done one")).to_have_count(1)
    await expect(row(one, watched)).to_have_attribute("data-status", "idle")
    await select_agent(one, watched)
    await expect(assistant_text(one, "done one")).to_have_count(1)
    order = await one.locator("#conversation > li:not([hidden])").evaluate_all(
        "els => els.map(e => !e.classList.contains('message') ? e.className"
        " : (e.querySelector('.text')?.textContent ?? '') + (e.querySelector('.tool') ? ' +tool' : ''))"
    )
    assert order == ["make a.txt", "I will write a.txt +tool", "done one", "turn-usage"]
    # answered in the other tab: this same browser, by the name its enrollment gives it
    await expect(one.locator("#conversation .tool .tool-answer")).to_have_text(
        re.compile(r"^Allowed by (Headless )?Chrome on Linux$")
    )
    await expect(one.locator("#conversation .tool .tool-render .render-diff")).to_have_count(1)
    await one.close()
    await two.close()


async def test_a_background_childs_request_shows_in_its_parents_view_saying_who_asks(
    context, project, daemon
):
    """A parent open in the page launches a child (subagent.create from a script of the parent's):
    the child has no client, so its permission request comes to the parent's page, shown in the
    parent's view with the child's name and agent_id; answering it there lets the child write.

    Covers: R6.3.8, R12.5.9
    """
    page = await open_app(context)
    parent = await create_agent(page, project)
    client = await daemon.unix()
    launch = {
        "type": "subagent.create",
        "id": "c",
        "parent_agent_id": parent,
        "name": "scout",
        "task": "write",
    }
    created, _ = await client.request(launch)
    assert created["success"], created
    child = created["data"]["runs"][0]["agent_id"]
    dialog = permission(page)
    await expect(dialog).to_have_count(1)
    await expect(dialog.locator(".asker")).to_have_text(f"Asked by scout ({child})")
    await expect(page.locator(".agent-row.selected")).to_have_attribute("data-agent-id", parent)
    await screenshot(page, "10-child-asks-in-parent")
    await allow(page).click()
    waited, _ = await client.request(
        {"type": "subagent.wait", "id": "w", "parent_agent_id": parent, "handles": [child], "timeout": 20}
    )
    assert waited["data"]["runs"][0]["state"] == "completed", waited
    assert (project / "a.txt").read_text() == "hello\n"
    await client.close()
    await page.close()

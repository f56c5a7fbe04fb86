"""UI requests of every kind, notify, abort and follow-up, in real Chromium against a real daemon
whose scripted agents ask through the ``ask`` test tool and wait through ``sleep``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    assistant_text,
    create_agent,
    enrolled_context,
    open_app,
    screenshot,
    send,
    start_daemon,
)
from playwright.async_api import expect

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [
    tool_step("ask", {"kind": "select", "title": "Pick a color", "options": ["red", "blue"]}),
    tool_step("ask", {"kind": "confirm", "title": "Sure?", "message": "This is a test."}),
    tool_step("ask", {"kind": "input", "title": "Your name", "prefill": "Ada"}),
    tool_step("ask", {"kind": "editor", "title": "Edit the plan", "prefill": "step 1"}),
    tool_step(
        "ask", {"kind": "notify", "title": "Heads up", "message": "just saying", "notify_type": "warning"}
    ),
    text_step("asked everything"),
    tool_step("sleep", {"seconds": 60}),
    {"blocks": [{"type": "pause", "ms": 1500}, {"type": "text", "text": "slow answer"}]},
    text_step("followed up"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = tmp_path_factory.mktemp("web-requests") / "home"
    tools = ["shard.testing.tools:AskTool", "shard.testing.tools:SleepTool"]
    write_scripted_home(home, SCRIPT, extensions=tools)
    async for started in start_daemon(home):
        yield started


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(chromium: Any, daemon: DaemonProcess, tmp_path_factory: pytest.TempPathFactory) -> Any:
    context = await enrolled_context(chromium, daemon)
    page = await open_app(context)
    project = tmp_path_factory.mktemp("project")
    await create_agent(page, Path(project))
    yield page
    await context.close()


def ui(page: Any) -> Any:
    return page.locator("#requests .request.ui")


def results(page: Any) -> Any:
    return page.locator("#conversation .tool .result-json")


async def test_every_ui_request_kind_is_answered_from_its_dialog(page):
    """select, confirm, input and editor open a dialog each, answered with ui_response and closed
    by ui_resolved; notify is a toast that needs no answer; the tool sees each answer.

    Covers: R6.3.2, R6.3.7, R9.5.19, R9.5.20, R9.5.21, R9.5.22
    """
    await send(page, "ask me")
    await expect(ui(page).locator("h3")).to_have_text("Pick a color")
    await screenshot(page, "06-ui-select")
    await ui(page).get_by_role("button", name="blue").click()
    await expect(ui(page).locator("h3")).to_have_text("Sure?")
    await expect(ui(page)).to_contain_text("This is a test.")
    await ui(page).get_by_role("button", name="Yes").click()
    await expect(ui(page).locator("h3")).to_have_text("Your name")
    field = ui(page).locator("input")
    await expect(field).to_have_value("Ada")
    await field.fill("Grace")
    await field.press("Enter")
    await expect(ui(page).locator("h3")).to_have_text("Edit the plan")
    await expect(ui(page).locator("textarea")).to_have_value("step 1")
    await ui(page).locator("textarea").fill("step 1\nstep 2")
    await ui(page).get_by_role("button", name="OK").click()
    await expect(page.locator(".toast-warning")).to_contain_text("Heads up just saying")
    await expect(assistant_text(page, "asked everything")).to_have_count(1)
    await expect(ui(page)).to_have_count(0)
    answers = await results(page).all_text_contents()  # inside a folded card
    assert [json.loads(a)["answer"] for a in answers] == ["blue", True, "Grace", "step 1\nstep 2", None]


async def test_abort_stops_a_running_turn(page):
    """While a turn runs the prompt box offers Steer, Follow up and Abort; Abort ends the turn.

    Covers: R9.2.2, R9.2.7
    """
    await send(page, "wait a minute")
    await expect(page.locator("#conversation .tool[data-state=running] .tool-name")).to_have_text("sleep")
    for name in ("Steer", "Follow up", "Abort"):
        await expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
    await expect(page.locator("#send")).to_be_hidden()
    await page.get_by_role("button", name="Abort").click()
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await expect(page.locator("#send")).to_be_visible()


async def test_a_follow_up_waits_for_the_running_turn(page):
    """A follow-up sent while the agent streams is delivered after the turn ends, then answered.

    Covers: R9.2.5
    """
    await send(page, "take your time")
    await expect(page.locator("#agent-status")).to_have_text("working")
    await page.fill("#prompt-text", "and after that?")
    await page.get_by_role("button", name="Follow up").click()
    await expect(assistant_text(page, "followed up")).to_have_count(1)
    texts = await page.locator("#conversation .message:not([hidden]) .text").all_inner_texts()
    tail = texts[texts.index("take your time") :]
    assert tail == ["take your time", "slow answer", "and after that?", "followed up"]

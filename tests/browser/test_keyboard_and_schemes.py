"""Keyboard access and light/dark, in real Chromium against a real daemon with scripted agents:
the main flow (create an agent, send, answer a permission, dismiss a question) with keys only, and
the page following prefers-color-scheme with readable text in both schemes."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    assistant_text,
    create_agent,
    open_app,
    permission,
    screenshot,
    send,
    start_daemon,
)
from playwright.async_api import expect

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [
    {
        "blocks": [
            {"type": "text", "text": "I will write a.txt"},
            {"type": "tool_call", "name": "write", "args": {"path": "a.txt", "content": "hello\n"}},
        ]
    },
    tool_step("ask", {"kind": "input", "title": "Your name", "prefill": "Ada"}),
    text_step("all done"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = tmp_path_factory.mktemp("web-keys") / "home"
    write_scripted_home(home, SCRIPT, extensions=["shard.testing.tools:AskTool"])
    async for started in start_daemon(home):
        yield started


async def press_until(page: Any, selector: str, key: str, limit: int = 60) -> None:
    """Press ``key`` until the focused element matches ``selector`` (a keyboard user tabbing)."""
    for _ in range(limit):
        if await page.evaluate("s => document.activeElement.matches(s)", selector):
            return
        await page.keyboard.press(key)
    raise AssertionError(f"{key} pressed {limit} times never focused {selector}")


async def test_the_main_flow_works_with_the_keyboard_only(context, project):
    """Tab reaches the skip link, which leads to the new-agent form; Enter creates the agent and
    puts the caret in the prompt; Enter sends; the permission dialog takes the focus, Escape goes
    back to the prompt and leaves it open (Escape is no answer), Shift+Tab reaches it again and its
    accelerator answers; a question's dialog takes the focus and Escape dismisses it.

    Covers: R9.5.5, R9.5.8, R9.5.19, R9.2.3
    """
    page = await context.new_page()
    await page.goto("/")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await page.keyboard.press("Tab")
    await expect(page.locator("#skip")).to_be_focused()
    await expect(page.locator("#skip")).to_be_visible()
    await page.keyboard.press("Enter")
    await expect(page.locator("#create input[name=cwd]")).to_be_focused()
    await page.keyboard.type(str(project))
    await page.keyboard.press("Enter")
    await expect(page.locator("#prompt-text")).to_be_focused()
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await page.keyboard.type("make a.txt")
    await page.keyboard.press("Enter")
    dialog = permission(page)
    await expect(dialog.get_by_role("button", name="Allow once")).to_be_focused()
    await screenshot(page, "14-keyboard-permission")
    await page.keyboard.press("Escape")
    await expect(page.locator("#prompt-text")).to_be_focused()
    await expect(dialog).to_have_count(1)
    await press_until(page, "#requests .request.permission button", "Shift+Tab")
    await page.keyboard.press("y")
    await expect(dialog).to_have_count(0)
    question = page.locator("#requests .request.ui")
    await expect(question.locator("input")).to_be_focused()
    await expect(question.locator("input")).to_have_value("Ada")
    await page.keyboard.press("Escape")
    await expect(question).to_have_count(0)
    await expect(assistant_text(page, "all done")).to_have_count(1)
    (answer,) = await page.locator("#conversation .tool .result-json").all_text_contents()  # folded card
    assert json.loads(answer) == {"answer": None}
    assert (project / "a.txt").read_text() == "hello\n"
    await page.close()


STYLES = """() => {
  const style = (selector) => getComputedStyle(document.querySelector(selector));
  return {
    bg: style('body').backgroundColor, fg: style('body').color,
    panel: style('#conversation .message.user').backgroundColor,
    muted: style('#conversation .message .role').color,
    dialog: style('#requests .request').backgroundColor,
    dialogText: style('#requests .request h3').color,
    deny: style('#requests .intent-deny').color,
    status: style('#agent-status').color,
  };
}"""


def luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


async def test_the_page_follows_the_system_color_scheme_with_readable_text(context, project):
    """With prefers-color-scheme light the page is light, with dark it is dark: every colour
    checked differs between the two, and text keeps at least WCAG AA contrast (4.5:1) on its
    background in both, body text at least 7:1.

    Covers: R9.5.5
    """
    page = await open_app(context)
    await create_agent(page, project)
    await send(page, "make a.txt")
    await expect(permission(page)).to_have_count(1)
    seen = {}
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        seen[scheme] = await page.evaluate(STYLES)
        await screenshot(page, f"15-scheme-{scheme}")
    light, dark = seen["light"], seen["dark"]
    assert luminance(light["bg"]) > 0.8 > 0.05 > luminance(dark["bg"])
    for key in light:
        assert light[key] != dark[key], key
    for colors in (light, dark):
        assert contrast(colors["fg"], colors["bg"]) >= 7
        assert contrast(colors["muted"], colors["panel"]) >= 4.5
        assert contrast(colors["dialogText"], colors["dialog"]) >= 4.5
        assert contrast(colors["deny"], colors["dialog"]) >= 4.5
        assert contrast(colors["status"], colors["bg"]) >= 4.5
    await page.close()

"""Everywhere a person is (issue 29): at 390 px the agent list and the conversation are two views
with no horizontal overflow and touch targets of at least 44 px; the page is an installable web
app (a manifest and an icon); and an axe-core audit of the main views — the list, a conversation
with a permission dialog, light and dark, 1400 px and 390 px — finds no serious or critical
violation. axe-core comes from web/node_modules (./test runs npm ci first)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import TIMEOUT_MS, create_agent, permission, screenshot, send, start_daemon
from playwright.async_api import expect

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

AXE = Path(__file__).resolve().parents[2] / "web" / "node_modules" / "axe-core" / "axe.min.js"
SCRIPT = [
    text_step("A reply with `code` and a long line " + "word " * 60),
    tool_step(
        "write",
        {"path": "notes/a-very-long-file-name-that-could-overflow-a-phone-screen.txt", "content": "x\n" * 3},
    ),
    text_step("Written."),
]
PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1400, "height": 900}
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
# every visible control a finger presses, and its height when under 44 px
SMALL_TARGETS = """() => [...document.querySelectorAll('button, select, input, textarea, summary, a[href]')]
  .map((el) => (el.type === 'checkbox' && el.closest('label')) || el)  // a checkbox's target is its label
  .filter((el) => el.checkVisibility() && el.getClientRects().length)
  .map((el) => [el.id || el.className || el.tagName, Math.round(el.getBoundingClientRect().height)])
  .filter(([, h]) => h < 44)"""


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-phone") / "home", SCRIPT)
    async for started in start_daemon(home):
        yield started


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(chromium: Any, daemon: DaemonProcess) -> AsyncIterator[Any]:
    """A phone-sized page. Its context bypasses the CSP only so that the audit can inject axe-core
    (an inline script); nothing else here depends on it."""
    assert daemon.enrollment_link, daemon.output
    context = await chromium.new_context(
        base_url=f"http://127.0.0.1:{daemon.port}", bypass_csp=True, viewport=PHONE
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    await page.goto(daemon.enrollment_link)
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    yield page
    await context.close()


async def audit(page: Any, name: str) -> None:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run  cd web && npm ci  (./test does)", pytrace=False)
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        await page.add_script_tag(path=str(AXE))
    result = await page.evaluate(
        "async () => (await axe.run(document, { resultTypes: ['violations'] })).violations"
        ".map((v) => ({ id: v.id, impact: v.impact,"
        " nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }))"
    )
    bad = [v for v in result if v["impact"] in ("serious", "critical")]
    assert not bad, f"{name}: {bad}"


async def test_on_a_phone_the_list_and_the_conversation_are_two_views_without_overflow(page, tmp_path):
    project = tmp_path / "a-project-folder-with-a-rather-long-name"
    project.mkdir()
    await expect(page.locator(".sidebar")).to_be_visible()
    agent = await create_agent(page, project)
    # the conversation replaced the list
    await expect(page.locator(".sidebar")).to_be_hidden()
    await expect(page.locator("#prompt-text")).to_be_visible()
    await send(page, "say something long")
    await expect(page.locator("#conversation .message.assistant .markdown code")).to_have_text("code")
    assert await page.evaluate(OVERFLOW) <= 0
    assert await page.evaluate(SMALL_TARGETS) == []
    await screenshot(page, "50-phone-conversation")
    await send(page, "write it")
    await expect(permission(page)).to_have_count(1)
    assert await page.evaluate(OVERFLOW) <= 0
    assert await page.evaluate(SMALL_TARGETS) == []
    await screenshot(page, "51-phone-permission")
    await audit(page, "phone, permission dialog")
    await permission(page).get_by_role("button", name="Allow once", exact=True).click()
    await expect(page.locator("#conversation .message.assistant .text", has_text="Written.")).to_have_count(1)
    assert await page.evaluate(OVERFLOW) <= 0
    await page.get_by_role("button", name="Back to the agents").click()
    await expect(page.locator(".sidebar")).to_be_visible()
    await expect(page.locator("#prompt-text")).to_be_hidden()
    await expect(page.locator(f'.agent-row.selected[data-agent-id="{agent}"]')).to_be_visible()
    assert await page.evaluate(OVERFLOW) <= 0
    assert await page.evaluate(SMALL_TARGETS) == []
    await screenshot(page, "52-phone-agents")
    await audit(page, "phone, agent list")
    await page.emulate_media(color_scheme="dark")
    await audit(page, "phone, agent list, dark")
    await screenshot(page, "52-phone-agents-dark")
    await page.emulate_media(color_scheme="light")


async def test_the_main_views_pass_the_audit_wide_light_and_dark(page):
    await page.set_viewport_size(WIDE)
    await page.locator(".agent-row .agent-open").first.click()
    await expect(page.locator("#conversation .message.assistant").first).to_be_visible()
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await audit(page, f"wide, conversation, {scheme}")
        await screenshot(page, f"53-wide-{scheme}")
    await page.emulate_media(color_scheme="light")
    await page.set_viewport_size(PHONE)


async def test_the_page_is_an_installable_web_app(page):
    manifest = await page.evaluate(
        "async () => { const link = document.querySelector('link[rel=manifest]');"
        " const r = await fetch(link.href);"
        " return [r.status, r.headers.get('content-type'), await r.json()]; }"
    )
    status, kind, body = manifest
    assert status == 200
    assert kind == "application/manifest+json"
    assert body["start_url"] == "/"
    assert body["display"] == "standalone"
    icon = await page.evaluate(f"async () => (await fetch({body['icons'][0]['src']!r})).status")
    assert icon == 200

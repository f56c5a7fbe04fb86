"""The conversation as a person reads it (issue 29): markdown with highlighted code and a Copy
button, thinking folded, compact tool cards that open onto their render, coloured diffs in cards and
permission dialogs, Allow/Deny keys declared (not spoken), agents named and grouped by folder with
their subagents nested, Model and Mode picked from the catalogs, a reload that reopens the open
agent with its pending request — and untrusted text (model text, tool output, file names, diffs)
that stays text. At 1400 px, light and dark, with screenshots."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    assistant_text,
    create_agent,
    enrolled_context,
    open_app,
    permission,
    screenshot,
    send,
    start_daemon,
)
from playwright.async_api import expect

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

MARKDOWN = (
    "Here is **the plan**, with `inline code`:\n\n"
    "```python\ndef greet(name):\n    return f'hi {name}'  # a comment\n```\n\n"
    "- first\n- second\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
)
EVIL = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
EVIL_NAME = "<img src=x onerror=window.pwned=3>.txt"
SCRIPT = [
    {
        "blocks": [
            {"type": "thinking", "text": "Let me think about greetings."},
            {"type": "text", "text": MARKDOWN},
        ]
    },
    text_step(f"Careful: {EVIL} and [a link](javascript:window.pwned=4) and <b>bold?</b>"),
    tool_step("write", {"path": EVIL_NAME, "content": "<script>window.pwned=5</script>\nline two\n"}),
    tool_step("bash", {"command": f"echo '{EVIL}'"}),
    text_step("All written."),
    tool_step("write", {"path": "later.txt", "content": "later\n"}),
    text_step("Later."),
]
DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PWNED = (  # nothing ran, and no element a handler or a script could ride on was made
    "() => window.pwned === undefined && !document.querySelector('#conversation script, #requests script,"
    ' #conversation img[onerror], #requests img[onerror], a[href^="javascript"]\')'
)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-rendering") / "home", SCRIPT)
    async for started in start_daemon(home):
        yield started


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(chromium: Any, daemon: DaemonProcess, tmp_path_factory: pytest.TempPathFactory) -> Any:
    context = await enrolled_context(chromium, daemon)
    await context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = await open_app(context)
    await page.set_viewport_size({"width": 1400, "height": 900})
    page.project = tmp_path_factory.mktemp("project")  # type: ignore[attr-defined]
    page.agent = await create_agent(page, page.project)  # type: ignore[attr-defined]
    yield page
    await context.close()


async def test_a_reply_is_markdown_with_highlighted_code_a_copy_button_and_folded_thinking(page):
    await send(page, "show me the plan")
    reply = page.locator("#conversation .message.assistant .text.markdown").last
    await expect(reply.locator("strong")).to_have_text("the plan")
    await expect(reply.locator("li")).to_have_text(["first", "second"])
    await expect(reply.locator("table td").first).to_have_text("1")
    code = reply.locator(".code-block pre code.hljs")
    await expect(code).to_contain_text("def greet(name):")
    await expect(code.locator(".hljs-keyword").first).to_have_text("def")
    await expect(code.locator(".hljs-comment")).to_have_text("# a comment")
    thinking = page.locator("#conversation details.thinking").last
    await expect(thinking).not_to_have_attribute("open", "")
    await expect(thinking.locator("summary")).to_have_text("Thinking")
    await thinking.locator("summary").click()
    await expect(thinking).to_contain_text("Let me think about greetings.")
    await reply.get_by_role("button", name="Copy the python code").click()
    copied = await page.evaluate("() => navigator.clipboard.readText()")
    assert copied == "def greet(name):\n    return f'hi {name}'  # a comment\n"
    await screenshot(page, "40-markdown-light")
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "40-markdown-dark")
    await page.emulate_media(color_scheme="light")


async def test_model_text_with_markup_stays_text(page):
    await send(page, "say something risky")
    reply = assistant_text(page, "Careful:")
    await expect(reply).to_contain_text(EVIL)  # shown, as the characters it is
    await expect(reply).to_contain_text("<b>bold?</b>")
    await expect(reply.locator("b, img, script")).to_have_count(0)
    assert await page.evaluate(PWNED)


async def test_a_write_shows_its_diff_in_the_dialog_and_the_card_with_names_and_lines_as_text(page):
    await send(page, "write the file")
    dialog = permission(page)
    await expect(dialog).to_have_count(1)
    # the keys are declared, not spoken: the button's name is its label alone
    allow = dialog.get_by_role("button", name="Allow once", exact=True)
    await expect(allow).to_have_attribute("aria-keyshortcuts", "y")
    await expect(dialog.get_by_role("button", name="Deny", exact=True)).to_have_attribute(
        "aria-keyshortcuts", "n"
    )
    diff = dialog.locator(".detail-diff .render-diff")
    await expect(diff.locator(".add").first).to_have_text("+<script>window.pwned=5</script>")
    await expect(diff.locator("figcaption .diff-path")).to_have_text(EVIL_NAME)
    assert await page.evaluate(PWNED)
    await screenshot(page, "41-permission-diff")
    await allow.click()
    card = page.locator("#conversation .tool", has=page.locator(".tool-name", has_text="write"))
    await expect(card.locator(".tool-details")).to_have_attribute("open", "")  # a diff opens its card
    await expect(card.locator(".tool-summary")).to_have_text("+2 \u22120")  # a minus sign
    await expect(card.locator(".tool-render .render-diff .add").first).to_have_text(
        "+<script>window.pwned=5</script>"
    )
    await expect(card.locator(".tool-args")).to_contain_text(EVIL_NAME)
    result = card.locator(".tool-result .render-diff .add")
    await expect(result).to_have_count(2)  # the result's own render has arrived
    colors = await result.evaluate_all("els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert colors
    assert "rgba(0, 0, 0, 0)" not in colors
    assert await page.evaluate(PWNED)


async def test_a_tool_card_is_one_line_that_opens_onto_its_output_kept_as_text(page):
    dialog = permission(page)
    await expect(dialog).to_have_count(1)  # the bash call
    await dialog.get_by_role("button", name="Allow once", exact=True).click()
    await expect(assistant_text(page, "All written.")).to_have_count(1)
    card = page.locator("#conversation .tool", has=page.locator(".tool-name", has_text="bash"))
    details = card.locator(".tool-details")
    await expect(details).not_to_have_attribute("open", "")  # it succeeded: one line
    await expect(card.locator(".tool-head")).to_contain_text("bash")
    await expect(card.locator(".tool-took")).to_have_text(re.compile(r"^(exit 0 · )?[0-9.]+ m?s$"))
    await card.locator(".tool-head").click()
    await expect(details).to_have_attribute("open", "")
    await expect(card.locator(".result-text")).to_contain_text(EVIL)
    assert await page.evaluate(PWNED)
    await screenshot(page, "42-tool-cards")


async def test_the_agent_is_named_by_its_folder_and_first_prompt_and_grouped_by_folder(page):
    row = page.locator(f'.agent-row[data-agent-id="{page.agent}"]')
    folder = page.project.name
    await expect(row.locator(".agent-name")).to_have_text(f"{folder}: show me the plan")
    group = page.locator(".agent-group", has=row)
    await expect(group.locator("h3")).to_contain_text(folder)
    await page.fill("#agent-search", "nothing like it")
    await expect(row).to_be_hidden()
    await page.fill("#agent-search", "plan")
    await expect(row).to_be_visible()
    await page.fill("#agent-search", "")


async def test_model_and_mode_are_picked_from_the_catalogs(page):
    form = page.locator("#create")
    model = form.locator("select[name=model]")
    await expect(model.locator("option").first).to_have_text("default")
    await expect(model.locator('option[value="test/m"]')).to_have_text("test/m")
    mode = form.locator("select[name=mode]")
    await expect(mode.locator("option[value=build]")).to_have_count(1)
    assert await form.locator("input[name=model], input[name=mode]").count() == 0  # no free text


async def test_the_changes_view_lists_each_file_written_with_its_diff(page):
    await page.get_by_role("button", name="Changes").click()
    change = page.locator(f'#changes .change[data-path="{EVIL_NAME}"]')
    await expect(change.locator(".change-path")).to_have_text(EVIL_NAME)
    await expect(change.locator(".diff-stat")).to_have_text("+2 \u22120")
    await change.locator("summary").click()
    await expect(change.locator(".render-diff .add").first).to_have_text("+<script>window.pwned=5</script>")
    assert await page.evaluate(PWNED)
    await screenshot(page, "44-changes")
    await page.get_by_role("button", name="Changes").click()
    await expect(page.locator("#changes")).to_be_hidden()


async def test_the_composer_recalls_earlier_messages_runs_slash_commands_and_takes_dropped_images(page):
    box = page.locator("#prompt-text")
    await box.focus()
    await page.keyboard.press("ArrowUp")
    await expect(box).to_have_value("write the file")
    await page.keyboard.press("ArrowUp")
    await expect(box).to_have_value("say something risky")
    await page.keyboard.press("ArrowDown")
    await page.keyboard.press("ArrowDown")
    await expect(box).to_have_value("")
    await box.fill("/com")
    await expect(page.locator("#slash-hints")).to_contain_text("/compact")
    await box.fill("/compact")
    await box.press("Enter")
    await expect(page.locator(".toast").last).to_contain_text("ompact")
    await expect(box).to_have_value("")
    await page.evaluate(
        """(b64) => {
        const png = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([png], 'dot.png', { type: 'image/png' }));
        const form = document.getElementById('prompt');
        for (const type of ['dragover', 'drop'])
          form.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
        }""",
        DOT_PNG,
    )
    await expect(page.locator("#attachments .attachment img")).to_have_count(1)
    await page.get_by_role("button", name="Remove image").click()
    await expect(page.locator("#attachments .attachment")).to_have_count(0)


async def test_a_reload_reopens_the_open_agent_with_its_pending_request(page):
    await send(page, "once more")
    await expect(permission(page)).to_have_count(1)
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await expect(page.locator(f'.agent-row.selected[data-agent-id="{page.agent}"]')).to_have_count(1)
    await expect(assistant_text(page, "All written.")).to_have_count(1)
    dialog = permission(page)
    await expect(dialog).to_have_count(1)
    await expect(dialog.get_by_role("button", name="Allow once", exact=True)).to_be_focused()
    await page.keyboard.press("y")
    await expect(assistant_text(page, "Later.")).to_have_count(1)


async def test_a_subagent_is_listed_under_its_parent_by_its_name(page, daemon):
    client = await daemon.unix()
    launch = {
        "type": "subagent.create",
        "id": "c",
        "parent_agent_id": page.agent,
        "name": "scout",
        "task": "look",
    }
    created, _ = await client.request(launch)
    assert created["success"], created
    child = created["data"]["runs"][0]["agent_id"]
    nested = page.locator(
        f'.agent-row[data-agent-id="{page.agent}"] .agent-children .agent-row[data-agent-id="{child}"]'
    )
    await expect(nested).to_have_count(1)
    await expect(nested.locator(".agent-name")).to_contain_text("scout")
    await screenshot(page, "43-subagent-nested")
    await client.close()


async def test_the_theme_switch_goes_light_dark_and_back_to_the_systems(page):
    theme = page.get_by_role("button", name=re.compile(r"^Theme: "))
    root = page.locator("html")
    await expect(theme).to_have_attribute("aria-label", "Theme: automatic (change)")
    await theme.click()
    await expect(root).to_have_attribute("data-theme", "light")
    await theme.click()
    await expect(root).to_have_attribute("data-theme", "dark")
    background = await page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(22, 24, 28)"
    await screenshot(page, "45-theme-dark")
    await page.reload()  # the choice is kept
    await expect(root).to_have_attribute("data-theme", "dark")
    await page.get_by_role("button", name=re.compile(r"^Theme: ")).click()
    await expect(root).not_to_have_attribute("data-theme", re.compile("."))

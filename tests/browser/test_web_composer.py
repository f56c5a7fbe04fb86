"""The prompt box as a component, in real Chromium against a real daemon (issue 29): ↑ and ↓ go
through the agent's earlier messages and back to what was typed, the slash commands that match show
under the box, a command that cannot run keeps its text, a pasted image travels with the message to
the model, and what is typed survives a reload."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import assistant_text, create_agent, open_app, send, start_daemon
from playwright.async_api import expect

from shard.testing import DaemonProcess, recorded_requests, text_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = tmp_path_factory.mktemp("web-composer") / "home"
    write_scripted_home(home, [text_step("first answer"), text_step("second answer")])
    async for started in start_daemon(home):
        yield started


async def test_history_slash_hints_and_a_pasted_image(
    context: Any, project: Any, daemon: DaemonProcess
) -> None:
    """↑ in the empty box brings back the last message sent, ↓ the box as it was; typing "/mo" lists
    /model and /mode; "/model" without a name says so and keeps the text; "/fork" forks and empties
    the box; an image pasted into the box previews and goes to the model with the next message,
    after which the box is empty.

    Covers: R9.2.1
    """
    page = await open_app(context)
    await create_agent(page, project)
    await send(page, "the first question")
    await expect(assistant_text(page, "first answer")).to_have_count(1)
    box = page.locator("#prompt-text")
    await box.press("ArrowUp")
    await expect(box).to_have_value("the first question")
    await box.press("ArrowDown")
    await expect(box).to_have_value("")

    await box.fill("/mo")
    hints = page.locator("#slash-hints li code")
    await expect(hints).to_have_text(["/model ID", "/mode NAME"])
    await box.fill("/model")
    await box.press("Enter")
    await expect(page.locator(".toast-error")).to_contain_text("/model needs a name")
    await expect(box).to_have_value("/model")  # nothing typed is lost
    await box.fill("")
    await expect(page.locator("#slash-hints")).to_be_hidden()
    await box.fill("/fork")
    await box.press("Enter")
    await expect(page.locator(".toast-info")).to_contain_text("Forked into session")
    await expect(box).to_have_value("")  # a command that ran is not left in the box

    await page.evaluate(
        """(b64) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'dot.png', { type: 'image/png' }));
        const paste = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
        document.getElementById('prompt-text').dispatchEvent(paste);
        }""",
        DOT_PNG,
    )
    await expect(page.locator("#attachments .attachment img")).to_have_count(1)
    await send(page, "what is in the picture")
    await expect(assistant_text(page, "second answer")).to_have_count(1)
    await expect(page.locator("#attachments .attachment")).to_have_count(0)
    last = [r for r in recorded_requests(daemon.home) if r["purpose"] != "summary"][-1]
    asked = last["messages"][-1]
    assert asked["role"] == "user"
    assert [b["type"] for b in asked["content"]].count("image") == 1
    await page.close()


async def test_what_is_typed_survives_a_reload(context: Any, project: Any) -> None:
    """Text typed in the box and not sent is there again after the tab reloads; a box emptied stays
    empty after the next reload.

    Covers: R9.2.1
    """
    page = await open_app(context)
    await create_agent(page, project)
    await page.fill("#prompt-text", "half a thought\nand a second line")
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await expect(page.locator("#prompt-text")).to_have_value("half a thought\nand a second line")
    await page.fill("#prompt-text", "")
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await expect(page.locator("#prompt-text")).to_have_value("")
    await page.close()

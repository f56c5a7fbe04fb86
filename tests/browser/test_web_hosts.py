"""Agents on other hosts in the web client, in real Chromium against a real daemon and a real sshd
on 127.0.0.1 playing the host (issue 30 item 1: "every client shows it"): the new-agent form offers
the configured hosts, an agent made there through the form runs there, and the list and the head
say where it runs; light, dark and 390 px with screenshots and the axe-core audit."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import TIMEOUT_MS, assistant_text, screenshot, send, start_daemon
from playwright.async_api import expect
from test_web_phone_and_audit import OVERFLOW, PHONE, WIDE, audit

from shard.testing import DaemonProcess, text_step, write_scripted_home
from shard.testing.sshd import Sshd

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = Sshd(tmp_path_factory.mktemp("sshd")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("remote")
    (root / "app").mkdir()
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(
    tmp_path_factory: pytest.TempPathFactory, sshd: Sshd, remote: Path
) -> AsyncIterator[DaemonProcess]:
    entry = (
        f'\n[[hosts]]\nname = "box"\nssh = "{sshd.alias}"\nssh_config = "{sshd.ssh_config}"\n'
        f'shard = "{sys.executable} -m shard"\nhome = "{remote / "home"}"\n'
    )
    home = write_scripted_home(
        tmp_path_factory.mktemp("web-hosts") / "home",
        [text_step("Hello from the box.")],
        loop=True,
        extra_toml=entry,
    )
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace('script = "script.json"', f'script = "{home / "script.json"}"')
    )
    async for started in start_daemon(home):
        yield started


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(chromium: Any, daemon: DaemonProcess) -> AsyncIterator[Any]:
    assert daemon.enrollment_link, daemon.output
    ctx = await chromium.new_context(
        base_url=f"http://127.0.0.1:{daemon.port}", bypass_csp=True, viewport=WIDE
    )
    ctx.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    page = await ctx.new_page()
    await page.goto(daemon.enrollment_link)
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    yield page
    await ctx.close()


async def test_an_agent_made_on_a_host_from_the_form_says_where_it_runs(page: Any, remote: Path) -> None:
    choice = page.locator("#host-choice")
    await expect(choice).to_be_visible()
    options = await page.locator("#create select[name=host] option").all_text_contents()
    assert options == ["this machine", "box"]
    await page.select_option("#create select[name=host]", "box")
    await page.fill("#create input[name=cwd]", str(remote / "app"))
    await page.click("#create button[type=submit]")
    selected = page.locator(".agent-row.selected")
    await expect(selected).to_have_count(1)
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await expect(page.locator(".agent-group h3 .host-badge")).to_have_text("@box")
    await expect(page.locator("#agent-title")).to_contain_text(f"{remote / 'app'} @box")
    await send(page, "hello?")
    await expect(assistant_text(page, "Hello from the box.")).to_have_count(1)
    assert list((remote / "home" / "sessions").iterdir()), "its session is on the host"
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await screenshot(page, f"70-host-agent-{scheme}")
        await audit(page, f"host agent, {scheme}")
    await page.set_viewport_size(PHONE)
    assert await page.evaluate(OVERFLOW) == 0
    await screenshot(page, "70-host-agent-390")
    await page.set_viewport_size(WIDE)

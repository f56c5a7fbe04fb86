"""Issue 27 in real Chromium against a real daemon: the header and the agent list say the model's
context window and where it came from; a turn's usage line and the list's totals count every input
token, those a provider read from its cache included."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import create_agent, open_app, send, start_daemon
from playwright.async_api import expect

from shard.testing import write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [
    {
        "blocks": [{"type": "text", "text": "From the cache."}],
        "usage": {"input": 10, "output": 3, "cache_read": 2164},
    }
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    home = tmp_path_factory.mktemp("web-window") / "home"
    write_scripted_home(home, SCRIPT, models=[{"id": "m", "context_window": 8192}], record=False)
    async for started in start_daemon(home):
        yield started


async def test_the_window_and_every_input_token_are_shown(context, daemon, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    page = await open_app(context)
    agent = await create_agent(page, project)
    await expect(page.locator("#agent-title")).to_contain_text("test/m, window 8,192 from config.toml")
    await send(page, "hello")
    # every input token (2,174), with its unit (issue 26 item 10)
    await expect(page.locator("#conversation .turn-usage")).to_have_text("turn: 2.17k in · 3 out")
    row = page.locator(f'.agent-row[data-agent-id="{agent}"]')
    await expect(row.locator(".agent-meta")).to_contain_text("window 8,192 from config.toml")
    await expect(row.locator(".usage")).to_contain_text("2.17k in · 3 out")

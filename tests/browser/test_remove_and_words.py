"""Removing agents and the page's words, in real Chromium against a real daemon (issue 26 items 6
and 10): Remove asks first and takes the agent off every tab's list (its session kept); Terminate
and Kill on a stopped agent are disabled and say why; Kill asks first; the toasts say "Agent
stopped", "Agent killed", "Agent removed"; the new-agent form stays in view with 15 agents; who
answered a request is a name (or "you"); token counts and an unchanged write read as a person
expects."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import create_agent, open_app, permission, screenshot, send, start_daemon
from playwright.async_api import expect

from shard.client import ShardClient
from shard.daemon.web.browsers import browser_name
from shard.protocol.events import PermissionResolved
from shard.protocol.words import STATUS_WORDS, status, tokens
from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home
from shard.testing.tools import TEST_TOOLS

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [tool_step("touch", {"path": "a.txt"}), tool_step("touch", {"path": "b.txt"}), text_step("done")]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_scripted_home(tmp_path_factory.mktemp("web-remove") / "home", SCRIPT, extensions=TEST_TOOLS)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(home: Path) -> AsyncIterator[DaemonProcess]:
    async for started in start_daemon(home):
        yield started


def row(page: Any, agent: str) -> Any:
    return page.locator(f'.agent-row[data-agent-id="{agent}"]')


def toast(page: Any, text: str) -> Any:
    return page.locator(".toast", has_text=re.compile(f"^{re.escape(text)}"))


async def settled(page: Any, agent: str) -> None:
    """The agent's sync arrived and the pickers' catalogs with it (asking for them wakes a stopped
    runtime, so a stop is only tested once they are in)."""
    await page.wait_for_function("id => window.shard.agents.get(id).synced", arg=agent)
    for picker in ("mode", "model"):
        await expect(page.locator(f"#controls .{picker}-picker option")).not_to_have_count(0)


async def listed(daemon: DaemonProcess) -> list[str]:
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        return [a.agent_id for a in await client.list_agents()]


async def test_remove_asks_first_and_takes_the_agent_off_every_list(context, project, daemon):
    """Remove on a stopped agent's row opens a confirmation: Cancel (or Escape) keeps it; Remove
    takes it off this tab's list and another tab's, says "Agent removed", and the daemon no longer
    lists it. A running agent's confirmation says its runtime is stopped first; confirmed, it goes
    too.

    Covers: R12.4.1
    """
    one = await open_app(context)
    stopped = await create_agent(one, project)
    running = await create_agent(one, project)
    two = await open_app(context)
    await row(one, stopped).get_by_role("button", name="Terminate").click()
    await expect(toast(one, "Agent stopped")).to_have_count(1)
    await expect(row(one, stopped)).to_have_attribute("data-runtime", "stopped")

    await row(one, stopped).get_by_role("button", name="Remove").click()
    dialog = one.locator("dialog.confirm")
    await expect(dialog).to_be_visible()
    await expect(dialog.locator("h3")).to_have_text(re.compile(r"^Remove .+\?$"))
    await expect(dialog).to_contain_text("Its session is kept")
    await expect(dialog).not_to_contain_text("stopped first")
    await expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    await screenshot(one, "20-remove-confirmation")
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(dialog).to_have_count(0)
    await row(one, stopped).get_by_role("button", name="Remove").click()
    await one.keyboard.press("Escape")
    await expect(one.locator("dialog.confirm")).to_have_count(0)
    assert stopped in await listed(daemon)

    await row(one, stopped).get_by_role("button", name="Remove").click()
    await one.locator("dialog.confirm").get_by_role("button", name="Remove").click()
    await expect(toast(one, "Agent removed")).to_have_count(1)
    for page in (one, two):
        await expect(row(page, stopped)).to_have_count(0)
    assert stopped not in await listed(daemon)

    await row(one, running).get_by_role("button", name="Remove").click()
    await expect(one.locator("dialog.confirm")).to_contain_text("Its runtime is stopped first")
    await one.locator("dialog.confirm").get_by_role("button", name="Remove").click()
    for page in (one, two):
        await expect(row(page, running)).to_have_count(0)
    await expect(one.locator("#agent")).to_be_hidden()  # it was the open agent: nothing is shown
    assert running not in await listed(daemon)
    await one.close()
    await two.close()


async def test_terminate_and_kill_on_a_stopped_agent_are_disabled_and_say_why(context, project):
    """Once stopped, the row's Terminate and the header's Terminate and Kill are disabled, each with
    a title that says why and what to do instead.

    Covers: R10.1.22, R10.1.23
    """
    page = await open_app(context)
    agent = await create_agent(page, project)
    await settled(page, agent)
    await page.locator("#terminate").click()
    await expect(toast(page, "Agent stopped")).to_have_count(1)
    await expect(row(page, agent)).to_have_attribute("data-runtime", "stopped")
    why = re.compile(r"^The agent is stopped: nothing to (terminate|kill)\. A prompt starts it again")
    for button in (
        row(page, agent).get_by_role("button", name="Terminate"),
        page.locator("#terminate"),
        page.locator("#kill"),
    ):
        await expect(button).to_be_disabled()
        await expect(button).to_have_attribute("title", why)
    await screenshot(page, "21-stopped-controls")
    await page.close()


async def test_kill_asks_first_and_the_toast_says_agent_killed(context, project):
    """Kill in the header opens a confirmation; Cancel keeps the runtime; Kill kills it and says
    "Agent killed" — never "agent.kill agent-…: done".

    Covers: R10.1.25, R6.4.12
    """
    page = await open_app(context)
    agent = await create_agent(page, project)
    await settled(page, agent)
    await page.locator("#kill").click()
    dialog = page.locator("dialog.confirm")
    await expect(dialog.locator("h3")).to_have_text(re.compile(r"^Kill .+\?$"))
    await dialog.get_by_role("button", name="Cancel").click()
    await expect(row(page, agent)).to_have_attribute("data-runtime", "running")
    await page.locator("#kill").click()
    await page.locator("dialog.confirm").get_by_role("button", name="Kill").click()
    await expect(toast(page, "Agent killed")).to_have_count(1)
    await expect(row(page, agent)).to_have_attribute("data-runtime", "stopped")
    await expect(page.locator(".toast", has_text=re.compile(r"agent\.|: done"))).to_have_count(0)
    await page.close()


async def test_the_new_agent_form_stays_in_view_with_fifteen_agents(context, project, daemon):
    """With 15 agents the list scrolls on its own and the new-agent form is still on screen.

    Covers: R12.4.1
    """
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        made = [await client.create_agent_id(project) for _ in range(15)]
        for agent_id in made:  # 15 runtimes are not needed for a list
            await client.kill(agent_id)
    page = await open_app(context)
    await page.set_viewport_size({"width": 1200, "height": 700})
    for agent_id in made:
        await expect(row(page, agent_id)).to_have_count(1)
    form = page.locator("#create")
    await expect(form).to_be_in_viewport(ratio=1)
    await expect(form.get_by_role("button", name="Create")).to_be_in_viewport()
    scrolls = await page.locator("#agents").evaluate("el => el.scrollHeight > el.clientHeight")
    assert scrolls, "the list scrolls, not the sidebar"
    await screenshot(page, "22-fifteen-agents")
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        for agent_id in made:
            await client.remove_agent(agent_id)
    await page.close()


async def test_who_answered_reads_as_a_name_or_you(context, project, daemon):
    """The browser allows a request: its card here reads "Allowed by you", and the SDK client sees
    the browser by the name its enrollment gives it ("… Chrome on Linux"). The SDK client, named
    "my-bot", denies the next: that card says "Denied by my-bot".

    Covers: R6.3.6, R9.5.14
    """
    page = await open_app(context)
    agent = await create_agent(page, project)
    async with await ShardClient.connect_unix(home=daemon.home, name="my-bot") as sdk:
        watched = await sdk.attach(agent)
        events = watched.subscribe()
        await send(page, "touch two files")
        await permission(page).get_by_role("button", name="Allow once").click()
        resolved = await events.next(20)
        while not isinstance(resolved, PermissionResolved):
            resolved = await events.next(20)
        assert resolved.source_label == browser_name(await page.evaluate("navigator.userAgent"))
        assert resolved.source_label.endswith("Chrome on Linux")
        answers = page.locator("#conversation .tool .tool-answer:not([hidden])")  # on each call's card
        await expect(answers).to_have_text(["Allowed by you"])
        await expect(permission(page)).to_have_count(1)  # the second request
        request_id = await permission(page).get_attribute("data-request-id")
        await watched.answer_permission(request_id, decision="deny")
        await expect(answers).to_have_text(["Allowed by you", "Denied by my-bot"])
    await screenshot(page, "23-who-answered")
    await page.close()


COUNTS = [
    0,
    999,
    1000,
    1049,
    1200,
    9_995,
    12_500,
    253_000,
    999_499,
    999_999,
    1_000_000,
    1_250_000,
    253_437_200,
    999_999_999,
    1_500_000_000,
    1125,
    999.4,
    999.5,
]


async def test_the_pages_words_match_the_python_clients(context):
    """words.js reads every count and every status as shard.protocol.words does (253M, never
    253437.2k; "waiting for permission", never its identifier), and an empty diff renders "No
    change".

    Covers: R11.0.6
    """
    page = await open_app(context)
    shown = await page.evaluate(
        "async (counts) => { const { tokens } = await import('/app/js/words.js');"
        " return counts.map((n) => tokens(n)); }",
        COUNTS,
    )
    assert shown == [tokens(n) for n in COUNTS]
    assert shown[COUNTS.index(253_437_200)] == "253M"
    said = await page.evaluate(
        "async (values) => { const { statusWords } = await import('/app/js/words.js');"
        " return values.map((v) => statusWords(v)); }",
        [*STATUS_WORDS, "some_new_state"],
    )
    assert said == [status(v) for v in [*STATUS_WORDS, "some_new_state"]]
    await page.evaluate(
        """async () => {
        const { renderDescriptor } = await import('/app/js/render/descriptors.js');
        const unchanged = renderDescriptor({kind: 'diff', path: 'notes.txt', hunks: []});
        document.querySelector('main').replaceChildren(unchanged);
        }"""
    )
    await expect(page.locator(".render-diff .no-change")).to_have_text("No change")
    await page.close()


async def test_no_remove_button_where_the_daemon_lacks_agent_remove(context):
    """A daemon whose hello does not offer ``agent-remove`` (an older one) gets no Remove button.

    Covers: R7.8, R7.9
    """
    page = await open_app(context)
    hidden = await page.evaluate(
        """async () => {
        const { mountAgentList } = await import('/app/js/render/agents.js');
        const { Store } = await import('/app/js/store.js');
        const store = new Store();
        store.hello({ type: 'hello', capabilities: [] }, 1);  // an older daemon: no agent-remove
        store.upsert({agent_id: 'agent-old', cwd: '/p', status: 'idle', runtime_state: 'running'});
        const ul = document.createElement('ul');
        mountAgentList(ul, store, {});
        const row = ul.querySelector('.agent-row[data-agent-id="agent-old"]');
        return row.querySelector('.agent-remove').hidden && !!row.querySelector('.agent-terminate');
        }"""
    )
    assert hidden is True
    await page.close()

"""What a user does in the web client, as Playwright steps (locators on the app's DOM), and the
daemon and enrolled browser context each module starts."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from playwright.async_api import expect

from shard.daemon.web.pages import PROOF_KEY
from shard.testing import DaemonProcess
from shard.testing.chromium import screenshot_dir
from shard.testing.web import Browser, code_of, post_enroll

TIMEOUT_MS = 30_000


async def open_app(context: Any) -> Any:
    page = await context.new_page()
    await page.goto("/")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    return page


async def create_agent(page: Any, cwd: Path) -> str:
    before = set(await page.locator(".agent-row").evaluate_all("rows => rows.map(r => r.dataset.agentId)"))
    await page.fill("#create input[name=cwd]", str(cwd))
    await page.click("#create button[type=submit]")
    new = "".join(f':not([data-agent-id="{known}"])' for known in before)
    selected = page.locator(f".agent-row.selected{new}")
    await expect(selected).to_have_count(1)
    agent_id: str = await selected.get_attribute("data-agent-id")
    await expect(page.locator("#agent-status")).to_have_text("idle")
    return agent_id


async def select_agent(page: Any, agent_id: str) -> None:
    await page.click(f'.agent-row[data-agent-id="{agent_id}"] .agent-open')
    await expect(page.locator(f'.agent-row.selected[data-agent-id="{agent_id}"]')).to_have_count(1)


async def send(page: Any, text: str) -> None:
    await page.fill("#prompt-text", text)
    await page.press("#prompt-text", "Enter")
    await expect(page.locator("#prompt-text")).to_have_value("")


def assistant_text(page: Any, text: str) -> Any:
    return page.locator("#conversation .message.assistant .text", has_text=text)


def permission(page: Any) -> Any:
    return page.locator("#requests .request.permission")


async def screenshot(page: Any, name: str) -> None:
    await page.screenshot(path=str(screenshot_dir() / f"{name}.png"), full_page=True)


async def start_daemon(home: Path) -> AsyncIterator[DaemonProcess]:
    daemon = await DaemonProcess.start(home)
    try:
        yield daemon
    finally:
        await daemon.kill()


async def enrolled_context(
    chromium: Any, daemon: DaemonProcess, *, in_a_tab: bool = False, **options: Any
) -> Any:
    """A browser context (its tabs share the cookie) enrolled with the link the daemon printed;
    ``options`` go to ``new_context`` (a viewport, ``bypass_csp`` for an audit that injects axe-core).

    By default the context gets what the enrollment page would have left it: the link's code is
    posted as that page posts it (same Origin, this Chromium's User-Agent), and the answer's cookie
    and origin proof go into the new context's storage. That spares a tab loading the page and then
    the app (about a CPU-second of Chromium a module). ``in_a_tab`` opens the link in a tab instead,
    for the module whose tests are about that flow."""
    assert daemon.enrollment_link, daemon.output
    origin = f"http://127.0.0.1:{daemon.port}"
    if in_a_tab:
        context = await chromium.new_context(base_url=origin, **options)
    else:
        user_agent = await chromium_user_agent(chromium)
        reply = await post_enroll(
            daemon.port, code_of(daemon.enrollment_link), origin, extra=[f"User-Agent: {user_agent}"]
        )
        enrolled = Browser.enrolled(daemon.port, reply, origin)
        storage = {
            "cookies": [cookie_of(enrolled.set_cookie)],
            "origins": [{"origin": origin, "localStorage": [{"name": PROOF_KEY, "value": enrolled.proof}]}],
        }
        context = await chromium.new_context(base_url=origin, storage_state=storage, **options)
    context.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    if in_a_tab:
        page = await context.new_page()
        await page.goto(daemon.enrollment_link)
        await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        await page.close()
    return context


async def chromium_user_agent(chromium: Any) -> str:
    """The User-Agent this Chromium's pages send (the daemon labels an enrolled browser with it)."""
    session = await chromium.new_browser_cdp_session()
    try:
        version = await session.send("Browser.getVersion")
    finally:
        await session.detach()
    user_agent: str = version["userAgent"]
    return user_agent


def cookie_of(set_cookie: str) -> dict[str, Any]:
    """The cookie a ``Set-Cookie`` value from 127.0.0.1 leaves in a browser, as Playwright's storage
    state holds one."""
    pair, *attributes = (part.strip() for part in set_cookie.split(";"))
    name, _, value = pair.partition("=")
    flags = {a.partition("=")[0].lower(): a.partition("=")[2] for a in attributes}
    return {
        "name": name,
        "value": value,
        "domain": "127.0.0.1",
        "path": flags.get("path", "/"),
        "expires": time.time() + int(flags["max-age"]) if "max-age" in flags else -1,
        "httpOnly": "httponly" in flags,
        "secure": "secure" in flags,
        "sameSite": flags.get("samesite", "Lax"),
    }


def write_session(home: Path, cwd: Path, texts: list[str]) -> str:
    """A session of ``cwd`` written through the project's own session writer (SessionStore and
    Transcript, as a runtime records one), alternating user and assistant text messages; its id."""
    from shard.agent.session.store import SessionStore
    from shard.agent.transcript import Transcript
    from shard.protocol.content import Message, TextBlock
    from shard.protocol.ids import new_id

    store = SessionStore.new(home, cwd=str(cwd.resolve()), model="test/m", mode="build")
    transcript = Transcript(store, home)
    try:
        for i, text in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            transcript.record_message(Message(id=new_id("msg"), role=role, content=[TextBlock(text=text)]))
        transcript.checkpoint()
    finally:
        store.close()
    return store.session_id


async def open_session(page: Any, session_id: str) -> str:
    """Open a session from the selected agent's session list as a new agent; its id, once synced."""
    before = set(await page.locator(".agent-row").evaluate_all("rows => rows.map(r => r.dataset.agentId)"))
    await page.get_by_role("button", name="Sessions").click()
    await (
        page.locator(f'#sessions li[data-session-id="{session_id}"]')
        .get_by_role("button", name="Open")
        .click()
    )
    new = "".join(f':not([data-agent-id="{known}"])' for known in before)
    selected = page.locator(f".agent-row.selected{new}")
    await expect(selected).to_have_count(1)
    agent_id: str = await selected.get_attribute("data-agent-id")
    await expect(page.locator("#agent-status")).to_have_text("idle")
    return agent_id


def runtime_pid(home: Path, session_id: str) -> int:
    """The live ``shard agent --stdio`` process of this daemon home running ``session_id``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--stdio" in argv and str(home).encode() in argv and session_id.encode() in argv:
            found.append(int(entry.name))
    assert len(found) == 1, found
    return found[0]

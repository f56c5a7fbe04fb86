"""The web client in real Chromium against a real daemon with scripted agents (issue 13): enroll,
create an agent, stream a turn with a tool call, answer a permission in one tab and watch it close
in another, drop the WebSocket and resume without duplicates, switch mode and model, fork.

Every agent plays the same script from its start, so each test creates its own agent."""

from __future__ import annotations

import json
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

from shard.testing import DaemonProcess, text_step, write_scripted_home
from shard.testing.web import enrollment_code

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

# The first test is about the printed link itself: the module's context is enrolled by opening it.
ENROLL_IN_A_TAB = True

SCRIPT = [
    {
        "blocks": [
            {"type": "thinking", "text": "The user wants a file."},
            {"type": "text", "text": "I will touch a.txt"},
            {"type": "tool_call", "name": "touch", "args": {"path": "a.txt"}},
        ]
    },
    text_step("done one"),
    {
        "blocks": [
            {"type": "text", "text": "partial start"},
            {"type": "pause", "ms": 500},
            {"type": "text", "text": "second answer"},
        ]
    },
    text_step("third answer"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = tmp_path_factory.mktemp("web") / "home"
    models = [{"id": "m", "context_window": 100_000}, {"id": "big", "context_window": 200_000}]
    write_scripted_home(home, SCRIPT, models=models, extensions=["shard.testing.tools:TouchTool"])
    async for started in start_daemon(home):
        yield started


async def first_turn(page: Any, project: Path) -> str:
    """Create an agent and play the script's first turn: a tool call allowed from the dialog."""
    agent = await create_agent(page, project)
    await send(page, "make a.txt")
    await expect(permission(page)).to_have_count(1)
    await permission(page).get_by_role("button", name="Allow once").click()
    await expect(assistant_text(page, "done one")).to_have_count(1)
    await expect(page.locator("#agent-status")).to_have_text("idle")
    return agent


async def test_enrollment_opens_the_app_and_keeps_no_secret(context):
    """The printed link enrolls this browser and lands on the app at /, which takes a ticket, opens
    the WebSocket, checks hello's protocol version and says it is connected; no cookie or ticket is
    readable by the page or kept in its storage — the secret kept there is the origin proof (not
    the cookie), which only this origin's pages can read; beside it this tab remembers its own
    connection ids (no secret: every attached client sees them as ``source``), so its answers still
    read "you" after a reload.

    Covers: R3.1, R3.2, R4.1.0.7, R4.1.2.25, R4.1.2.26, R4.1.2.28, R6.4.17
    """
    page = await open_app(context)
    await expect(page.locator("#connection")).to_contain_text("protocol 0.1.0")
    kept = await page.evaluate(
        "() => [document.cookie, Object.keys(localStorage), Object.keys(sessionStorage), location.hash]"
    )
    assert kept == ["", ["shard.browserProof"], ["shard.clientIds"], ""]
    ids = json.loads(await page.evaluate("() => sessionStorage.getItem('shard.clientIds')"))
    assert all(re.fullmatch(r"websocket-client-\d+", i) for i in ids), ids
    proof = await page.evaluate("() => localStorage.getItem('shard.browserProof')")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", proof)
    assert proof not in {c["value"] for c in await context.cookies()}
    await screenshot(page, "01-connected")
    await page.close()


async def test_a_browser_not_enrolled_is_told_how_to_enroll(chromium, daemon):
    """Without the session cookie /bootstrap refuses a ticket; the page says how to enroll and does
    not retry in a loop.

    Covers: R4.1.0.7
    """
    stranger = await chromium.new_context(base_url=f"http://127.0.0.1:{daemon.port}")
    page = await stranger.new_page()
    await page.goto("/")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "unenrolled")
    await expect(page.locator("#connection")).to_contain_text("shard web enroll")
    await expect(page.locator("#reconnect")).to_be_hidden()
    await stranger.close()


async def test_a_browser_without_its_proof_is_told_to_enroll_again(chromium, daemon):
    """An enrolled browser whose origin proof is gone (its site storage cleared, the cookie kept)
    gets no ticket: the page shows the daemon's own line — why, and to enroll again — and does not
    retry; a fresh link enrolls it again.

    Covers: R4.1.0.7
    """
    ctx = await chromium.new_context(base_url=f"http://127.0.0.1:{daemon.port}")
    page = await ctx.new_page()
    await page.goto(f"/enroll#code={await enrollment_code(daemon.socket)}")
    status = page.locator("#connection")
    await expect(status).to_have_attribute("data-state", "connected")
    await page.evaluate("() => localStorage.clear()")
    await page.reload()
    await expect(status).to_have_attribute("data-state", "unenrolled")
    await expect(status).to_contain_text("without this browser's enrollment proof")
    await expect(status).to_contain_text("shard web enroll")
    await expect(page.locator("#reconnect")).to_be_hidden()
    await page.goto(f"/enroll#code={await enrollment_code(daemon.socket)}")
    await expect(status).to_have_attribute("data-state", "connected")
    await ctx.close()


async def test_a_turn_streams_with_its_tool_call_and_the_permission_closes_in_the_other_tab(context, project):
    """Create an agent, send a prompt: the thinking, the text and the tool call render; the
    permission dialog shows the server's details and choices in both tabs; answered in the first
    (by choice_id), it closes in the second, whose tool card says where the answer came from; the tool result
    and the final text follow, once each, with the turn's usage.

    Covers: R6.3.1, R6.3.6, R9.5.5, R9.5.8, R9.5.14, R3.3, R6.2.2
    """
    one = await open_app(context)
    agent = await create_agent(one, project)
    two = await open_app(context)
    await select_agent(two, agent)
    await send(one, "make a.txt")
    for page in (one, two):
        dialog = permission(page)
        await expect(dialog).to_have_count(1)
        await expect(dialog.locator("h3")).to_have_text("Allow touch on a.txt?")
        await expect(dialog.locator(".detail pre")).to_contain_text('"path": "a.txt"')
        await expect(dialog.get_by_role("button", name="Allow once")).to_be_visible()
    await expect(one.locator(".thinking")).to_contain_text("The user wants a file.")
    await expect(assistant_text(one, "I will touch a.txt")).to_have_count(1)
    await screenshot(one, "02-permission")
    await one.evaluate(
        "() => { const s = window.shard.conn; const send = s.send.bind(s); window.sentLog = [];"
        " s.send = (m) => { window.sentLog.push(m); return send(m); }; }"
    )
    await permission(one).get_by_role("button", name="Allow once").click()
    await expect(permission(two)).to_have_count(0)
    await expect(permission(one)).to_have_count(0)
    # who answered, in words, on the tool call's card: the other tab is this same browser, named from
    # its enrollment; this tab answered
    await expect(two.locator("#conversation .tool .tool-answer")).to_have_text(
        re.compile(r"^Allowed by (Headless )?Chrome on Linux$")
    )
    await expect(one.locator("#conversation .tool .tool-answer")).to_have_text("Allowed by you")
    sent = await one.evaluate("() => window.sentLog")
    answers = [m for m in sent if m["type"] == "permission_response"]
    assert len(answers) == 1
    assert answers[0]["choice_id"] == "allow"
    assert "decision" not in answers[0]
    for page in (one, two):
        card = page.locator("#conversation .tool")
        await expect(card).to_have_count(1)
        await expect(card.locator(".tool-name")).to_have_text("touch")
        await expect(card.locator(".tool-args")).to_have_text("path=a.txt")
        await expect(card.locator(".result-text")).to_have_text("touched a.txt")
        await expect(card.locator(".tool-footer")).to_have_text(re.compile(r"↳ [0-9.]+ m?s"))
        await expect(assistant_text(page, "done one")).to_have_count(1)
        await expect(page.locator("#conversation .turn-usage")).to_have_count(1)
    assert (project / "a.txt").exists()
    await screenshot(two, "03-conversation")
    await two.emulate_media(color_scheme="dark")
    await screenshot(two, "03-conversation-dark")
    await one.close()
    await two.close()


async def test_a_dropped_socket_resumes_without_duplicates_or_gaps(context, project):
    """The WebSocket drops while a message streams; the page says it is reconnecting, reconnects
    after the backoff, re-attaches from sync and shows what happened meanwhile (the message completed
    while it was away) with no message, tool card or usage line twice, in order.

    Covers: R6.4.17, R6.4.18, R6.4.20, R6.4.21, R3.4, R3.5, R2.2.8
    """
    page = await open_app(context)
    await first_turn(page, project)
    await send(page, "and then?")
    await expect(page.locator("#conversation .message.streaming .text")).to_have_text("partial start")
    await page.evaluate("() => window.shard.conn.drop()")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "reconnecting")
    await expect(page.locator("#connection")).to_contain_text("reconnecting in 1 s")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await expect(assistant_text(page, "second answer")).to_have_count(1)
    await expect(page.locator("#agent-status")).to_have_text("idle")
    await send(page, "more")
    await expect(assistant_text(page, "third answer")).to_have_count(1)
    conversation = page.locator("#conversation")
    ids = await conversation.locator(".message[data-id]").evaluate_all("els => els.map(e => e.dataset.id)")
    assert len(ids) == len(set(ids)) == 8  # 3 prompts + 3 answers + tool call turn + its results
    for text in ("I will touch a.txt", "done one", "partial start", "second answer", "third answer"):
        await expect(assistant_text(page, text)).to_have_count(1)
    texts = await conversation.locator(".message:not([hidden]) .text").all_inner_texts()
    tail = texts[texts.index("and then?") :]  # the script's two text blocks stream as one
    assert tail == ["and then?", "partial startsecond answer", "more", "third answer"]
    answer, usage, question = await conversation.locator(":scope > li").evaluate_all(
        "els => ['done one', null, 'and then?'].map(t => t === null"
        " ? els.findIndex(e => e.classList.contains('turn-usage'))"
        " : els.findIndex(e => e.dataset.id && e.textContent.includes(t)))"
    )
    assert 0 <= answer < usage < question  # the first turn's usage line stayed between its turn and the next
    for text in ("make a.txt", "and then?", "more"):
        await expect(conversation.locator(".message.user .text", has_text=text)).to_have_count(1)
    await expect(conversation.locator(".tool")).to_have_count(1)
    await page.close()


async def test_a_permission_pending_across_a_drop_is_shown_once_and_still_answers(context, project):
    """The socket drops while a permission dialog is open; after the reconnect the request comes
    back from sync.pending_requests (and is re-sent): one dialog, and answering it finishes the turn.

    Covers: R6.4.22, R6.4.23, R6.4.25, R12.6.1, R12.6.2, R12.6.3
    """
    page = await open_app(context)
    await create_agent(page, project)
    await send(page, "make a.txt")
    await expect(permission(page)).to_have_count(1)
    await page.evaluate("() => window.shard.conn.drop()")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "reconnecting")
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    await expect(page.locator("#agent-status")).to_have_text("waiting for permission")
    await expect(permission(page)).to_have_count(1)
    await permission(page).get_by_role("button", name="Allow once").click()
    await expect(assistant_text(page, "done one")).to_have_count(1)
    await expect(permission(page)).to_have_count(0)
    await page.close()


async def test_only_the_selected_agent_is_attached_interactively(context, project):
    """Two agents on one socket: selecting the second re-attaches the first as an observer, so at
    every moment at most one agent holds this page's interactive attachment.

    Covers: R4.1.2.29, R3.3
    """
    page = await open_app(context)
    frames: list[dict[str, Any]] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda f: frames.append(json.loads(f))))
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    first = await create_agent(page, project)
    second = await create_agent(page, project)
    await select_agent(page, first)
    await expect(page.locator(f'.agent-row[data-agent-id="{second}"] input[type=checkbox]')).to_be_checked()
    roles: dict[str, str] = {}
    for frame in frames:
        if frame["type"] == "agent.attach":
            roles[frame["agent_id"]] = frame["role"]
            assert list(roles.values()).count("interactive") <= 1, roles
    assert roles == {first: "interactive", second: "observer"}
    await page.close()


async def test_mode_and_model_pickers_follow_the_catalog_and_other_tabs(context, project):
    """The pickers come from list_modes/list_models because sync advertised them; switching in one
    tab updates the other through mode_changed / model_changed.

    Covers: R7.10, R9.2.10, R10.2.1
    """
    one = await open_app(context)
    agent = await create_agent(one, project)
    two = await open_app(context)
    await select_agent(two, agent)
    for page in (one, two):
        await expect(page.locator(".mode-picker")).to_have_value("build")
        await expect(page.locator(".model-picker")).to_have_value("test/m")
    await one.select_option(".mode-picker", "plan")
    await expect(two.locator(".mode-picker")).to_have_value("plan")
    await one.select_option(".model-picker", "test/big")
    await expect(two.locator(".model-picker")).to_have_value("test/big")
    await screenshot(two, "04-pickers")
    await one.close()
    await two.close()


async def test_fork_from_a_message_lists_the_new_session(context, project):
    """Fork at a message: the new session appears in the session list as a fork.

    Covers: R9.2.43, R9.2.60
    """
    page = await open_app(context)
    await first_turn(page, project)
    await page.locator("#conversation .message.user").first.get_by_role("button", name="Fork").click()
    await expect(page.locator(".toast")).to_contain_text("Forked into session")
    await expect(page.locator("#sessions .fork-row")).to_have_count(1)
    await screenshot(page, "05-sessions")
    await page.close()


DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PASTE_PNG = """async (png) => {
  const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], 'dot.png', { type: 'image/png' }));
  const paste = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
  document.getElementById('prompt-text').dispatchEvent(paste);
}"""


async def test_a_pasted_image_goes_with_the_prompt_and_kill_stops_the_agent(context, project):
    """A pasted image previews in the prompt box and travels as a base64 Image block; Kill stops
    the agent's runtime and says so.

    Covers: R9.2.1, R10.1.25
    """
    page = await open_app(context)
    await create_agent(page, project)
    await page.evaluate(
        "() => { const s = window.shard.conn; const send = s.send.bind(s); window.sentLog = [];"
        " s.send = (m) => { window.sentLog.push(m); return send(m); }; }"
    )
    await page.evaluate(PASTE_PNG, DOT_PNG)
    await expect(page.locator("#attachments img")).to_have_attribute("src", re.compile("^blob:"))
    await send(page, "what is this?")
    await expect(page.locator("#attachments img")).to_have_count(0)
    sent = await page.evaluate("() => window.sentLog")
    (prompt,) = [m for m in sent if m["type"] == "prompt"]
    assert [(i["type"], i["mime_type"]) for i in prompt["images"]] == [("image", "image/png")]
    assert prompt["images"][0]["data"].startswith("iVBORw0KGgo")
    await expect(page.locator("#agent-status")).to_have_text("waiting for permission")
    await page.get_by_role("button", name="Kill").click()
    await page.locator("dialog.confirm").get_by_role("button", name="Kill").click()  # it asks first
    await expect(page.locator(".toast")).to_contain_text("Agent killed")
    await expect(page.locator(".toast-error")).to_have_count(0)
    await page.close()

"""The client's modules exercised one by one inside real Chromium (imported from the daemon that
serves them): the reconnect backoff, the capability-gated pickers and their stale-answer guard, and
every RenderDescriptor kind."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import create_agent, enrolled_context, open_app, screenshot, start_daemon
from playwright.async_api import expect

from shard.testing import DaemonProcess, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(chromium: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-modules") / "home", [])
    daemon: DaemonProcess
    async for daemon in start_daemon(home):
        context = await enrolled_context(chromium, daemon)
        yield await open_app(context)
        await context.close()


async def test_reconnect_backoff_doubles_up_to_thirty_seconds(page):
    """1, 2, 4 … 30 s between attempts, never more.

    Covers: R6.4.17, R2.2.6, R2.2.7
    """
    delays = await page.evaluate(
        "async () => { const m = await import('/app/js/connection.js');"
        " return [0, 1, 2, 3, 4, 5, 6, 12].map(m.backoffSeconds); }"
    )
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]


CONTROLS = """async ([capabilities, bumpEpoch]) => {
  const { Controls } = await import('/app/js/controls.js');
  const el = document.createElement('span');
  const agent = { id: 'a', capabilities, epoch: 0 };
  const sent = [];
  const conn = { generation: 1, request: async (m) => {
    sent.push(m.type);
    await null;
    if (bumpEpoch) agent.epoch += 1;  // a replacement runtime took over while this was in flight
    if (m.type === 'list_modes')
      return { success: true, data: { modes: [{ name: 'build' }, { name: 'plan' }], active: 'plan' } };
    if (m.type === 'list_models')
      return { success: true, data: { models: [{ id: 'x/1' }, { id: 'x/2' }], active: { id: 'x/2' } } };
    return { success: false, error: { message: 'no' } };
  } };
  await new Controls(el, conn, () => {}).load(agent);
  return { sent, pickers: [...el.querySelectorAll('select')].map((s) => [s.className, s.value, s.disabled]) };
}"""


async def test_pickers_appear_only_for_advertised_capabilities(page):
    """No capability, no picker and no catalog request; a catalog without its *-switch capability
    shows disabled; the pickers are built from the server's catalog with its active entry.

    Covers: R7.8, R7.10
    """
    bare = await page.evaluate(CONTROLS, [[], False])
    assert bare == {"sent": [], "pickers": []}
    both = await page.evaluate(CONTROLS, [["mode-catalog", "mode-switch", "model-catalog"], False])
    assert sorted(both["sent"]) == ["list_models", "list_modes"]
    assert sorted(both["pickers"]) == [["mode-picker", "plan", False], ["model-picker", "x/2", True]]


async def test_a_catalog_answered_for_an_older_runtime_epoch_is_discarded(page):
    """A list_* answer that arrives after the runtime_epoch changed is not applied.

    Covers: R7.10
    """
    stale = await page.evaluate(CONTROLS, [["mode-catalog", "model-catalog"], True])
    assert sorted(stale["sent"]) == ["list_models", "list_modes"]
    assert sorted(stale["pickers"]) == [["mode-picker", "", True], ["model-picker", "", True]]


DESCRIPTORS = [
    {"kind": "text", "text": "plain"},
    {"kind": "kv", "pairs": [{"k": "branch", "v": "main"}]},
    {
        "kind": "diff",
        "path": "a.py",
        "hunks": [
            {"old_start": 1, "old_lines": 2, "new_start": 1, "new_lines": 2, "lines": [" x", "-y", "+z"]}
        ],
    },
    {"kind": "tree", "root": {"label": "src", "kind": "dir", "children": [{"label": "a.py"}]}},
    {"kind": "progress", "label": "tests", "current": 3, "total": 10},
    {"kind": "status", "label": "careful", "tone": "warn"},
    {"kind": "command", "command": "ls -la", "exitCode": 2, "durationMs": 1500},
    {"kind": "path_list", "paths": [{"path": "a.py", "kind": "file", "hint": "def f():"}]},
    {"kind": "code", "path": "a.py", "lang": "python", "text": "print(1)"},
    {"kind": "hologram", "beam": 1},
]


async def test_every_render_descriptor_kind_renders(page):
    """Each kind of §11 has its own rendering (a diff colors its added and removed lines); an
    unknown kind shows as JSON instead of breaking the page.

    Covers: R11.0.6, R9.4.14
    """
    await page.evaluate(
        """async (descriptors) => {
        const { renderDescriptor } = await import('/app/js/render/descriptors.js');
        const box = document.createElement('section');
        box.id = 'descriptors';
        box.className = 'conversation';
        for (const d of descriptors) box.append(renderDescriptor(d));
        document.querySelector('main').replaceChildren(box);
        }""",
        DESCRIPTORS,
    )
    box = page.locator("#descriptors")
    await expect(box.locator(".render")).to_have_count(len(DESCRIPTORS))
    await expect(box.locator(".render-kv dt")).to_have_text("branch")
    await expect(box.locator(".render-diff .add")).to_have_text("+z")
    await expect(box.locator(".render-diff .del")).to_have_text("-y")
    colors = await box.locator(".render-diff .add, .render-diff .del").evaluate_all(
        "els => els.map(e => getComputedStyle(e).backgroundColor)"
    )
    assert len(set(colors)) == 2
    assert "rgba(0, 0, 0, 0)" not in colors
    await expect(box.locator(".render-tree li li")).to_have_text("a.py")
    await expect(box.locator(".render-progress progress")).to_have_attribute("value", "3")
    await expect(box.locator(".render-status .tone-warn")).to_have_text("careful")
    await expect(box.locator(".render-command .tool-footer")).to_have_text("↳ exit 2 · 1.5 s")
    await expect(box.locator(".render-path_list li")).to_contain_text("a.py def f():")
    await expect(box.locator(".render-code figcaption")).to_have_text("a.py")
    await expect(box.locator(".render-hologram pre")).to_contain_text('"beam": 1')
    await screenshot(page, "07-descriptors")


LONG_SESSION = """async () => {
  const { Conversation, FIRST_WINDOW, PAGE } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  document.querySelector('main').replaceChildren(conv.el);
  const messages = [];
  for (let i = 0; i < 3000; i++) {
    const role = i % 2 ? 'assistant' : 'user';
    messages.push({ id: `m${i}`, role, content: [{ type: 'text', text: `message ${i} `.repeat(20) }] });
  }
  conv.sync({ messages });
  const rendered = () => [...conv.el.querySelectorAll(':scope > .message')].map((li) => li.dataset.id);
  const opened = rendered();
  for (const li of conv.el.children) li.seen = true;  // a mark a re-created element would not carry
  const changes = [];
  const observer = new MutationObserver((records) => changes.push(...records));
  observer.observe(conv.el, { subtree: true, childList: true, characterData: true });
  for (let i = 0; i < 500; i++)
    conv.delta({ message_id: 'live', block_index: 0, kind: 'text', text_delta: 'x' });
  await new Promise((r) => setTimeout(r, 0));
  observer.disconnect();
  const kinds = {};
  for (const c of changes) kinds[c.type] = (kinds[c.type] || 0) + 1;
  const kept = [...conv.el.children].filter((li) => li.seen).length;
  conv.sync({ messages });  // a resync of the same window adds nothing
  const resynced = rendered();
  conv.showEarlier();
  const more = rendered();
  return { FIRST_WINDOW, PAGE, opened, kinds, kept, resynced, more,
           live: conv.el.lastElementChild.textContent.length,
           button: conv.el.firstElementChild.className };
}"""


async def test_a_long_session_renders_a_window_and_deltas_incrementally(page):
    """3000 messages: a sync renders only the last FIRST_WINDOW behind a "show earlier" row; deltas
    append to one text node, all those of one flush at once (no other element added or
    re-created); a resync of the same window adds nothing; "show earlier" renders PAGE more above, in order.

    Covers: R9.4.7
    """
    result = await page.evaluate(LONG_SESSION)
    window, page_size = result["FIRST_WINDOW"], result["PAGE"]
    assert result["opened"] == [f"m{i}" for i in range(3000 - window, 3000)]
    assert result["button"] == "show-earlier"
    # the live message and its text block are added once; the 500 deltas that arrived between two
    # flushes are one text append (coalesced: one layout and repaint, not 500)
    assert result["kinds"] == {"childList": 2, "characterData": 1}
    assert result["kept"] == window + 1  # every rendered message and the "show earlier" row
    assert result["live"] == 500
    assert result["resynced"] == [*result["opened"], "live"]  # the in-flight message stays last
    assert result["more"] == [f"m{i}" for i in range(3000 - window - page_size, 3000)] + ["live"]


COMPACTION = """async () => {
  const { Conversation } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  const text = (id, t) =>
    ({ id, role: id.startsWith('u') ? 'user' : 'assistant', content: [{ type: 'text', text: t }] });
  conv.sync({ messages: [text('u1', 'old question'), text('a1', 'old answer'), text('u2', 'next')] });
  conv.compaction({ index: 0, tokens_before: 9000, tokens_after: 1200, first_kept_entry_id: 'u2',
                    message_range: ['u1', 'a1'] });
  const live = [...conv.el.children].map((li) => li.className + ':' + (li.dataset.id || li.textContent));
  conv.sync({ messages: [text('s1', 'summary of before'), text('u2', 'next')], compaction_index: 1 });
  return [live, [...conv.el.children].map((li) => li.className + ':' + (li.dataset.id || li.textContent))];
}"""


async def test_compaction_shows_a_marker_and_the_window_after_it(page):
    """A compaction event leaves a marker; the next sync's post-compaction window replaces the
    summarized messages and marks where the kept window starts.

    Covers: R6.4.21, R9.1.4
    """
    live, synced = await page.evaluate(COMPACTION)
    assert live == [
        "message user:u1",
        "message assistant:a1",
        "message user:u2",
        "compaction-marker:Compacted: 9000 → 1200 tokens",
    ]
    assert synced == [
        "compaction-marker from-sync:Compacted (1): the summary below stands for the earlier messages",
        "message assistant:s1",
        "message user:u2",
    ]


async def test_a_tool_call_without_read_only_counts_as_mutating_and_code_is_not_highlighted(page):
    """A tool_call that omits read_only is shown like a mutating one; a code descriptor's lang is
    informational: the code stays one plain text node (no highlighting markup).

    Covers: R9.4.13, R11.0.17
    """
    result = await page.evaluate(
        """async () => {
        const { Conversation } = await import('/app/js/render/conversation.js');
        const { renderDescriptor } = await import('/app/js/render/descriptors.js');
        const conv = new Conversation(() => {});
        conv.toolCall({ tool_call_id: 't1', name: 'bash', args: { command: 'ls' } });
        conv.toolCall({ tool_call_id: 't2', name: 'read', args: { path: 'a' }, read_only: true });
        const cards = [...conv.el.querySelectorAll('.tool')].map((c) => c.classList.contains('read-only'));
        const code = renderDescriptor({ kind: 'code', lang: 'python', text: 'def f():\\n    return 1' });
        const inner = code.querySelector('code');
        return { cards, children: inner.children.length, text: inner.textContent, lang: inner.dataset.lang };
        }"""
    )
    assert result["cards"] == [False, True]
    assert result["children"] == 0
    assert result["text"] == "def f():\n    return 1"
    assert result["lang"] == "python"


async def test_a_fatal_error_is_shown_with_a_way_to_restart_the_agent(page, tmp_path_factory):
    """An error event with fatal: true shows its code and message and a Restart button; pressing it
    brings the agent back on a fresh runtime (a new sync with a higher runtime_epoch).

    Covers: R9.4.26
    """
    cwd = tmp_path_factory.mktemp("fatal-project")
    page = await open_app(page.context)  # a whole app: the tests above replaced the shared page's main
    agent = await create_agent(page, cwd)
    before = await page.evaluate("(id) => window.shard.agents.get(id).epoch", agent)
    await page.evaluate(
        """(id) => { const app = window.shard; const a = app.agents.get(id);
        const error = { code: 'SESSION_CORRUPT', message: 'the session broke', fatal: true };
        app.agentEvent(a, { type: 'error', agent_id: id, ...error }); }""",
        agent,
    )
    note = page.locator("#conversation .note-fatal")
    await expect(note).to_contain_text("SESSION_CORRUPT: the session broke")
    await note.get_by_role("button", name="Restart the agent").click()
    await page.wait_for_function("([id, e]) => window.shard.agents.get(id).epoch > e", arg=[agent, before])
    await page.close()

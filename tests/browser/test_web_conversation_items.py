"""The conversation's items as components, in real Chromium (issue 29): the list reads a transcript
and re-renders an item only when what it shows changed — a tool call's start and result touch the
message holding the call and add the result's (hidden) item, and leave every other message's
elements alone — and a card shown for a call before its message arrived becomes that message's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import enrolled_context, open_app, start_daemon

from shard.testing import DaemonProcess, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def page(chromium: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-items") / "home", [])
    daemon: DaemonProcess
    async for daemon in start_daemon(home):
        context = await enrolled_context(chromium, daemon)
        yield await open_app(context)
        await context.close()


ONLY_WHAT_CHANGED = """async () => {
  const { Conversation } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  document.querySelector('main').replaceChildren(conv.el);
  const text = (id, role, t) => ({ id, role, content: [{ type: 'text', text: t }] });
  const call = { id: 'a2', role: 'assistant', content: [
    { type: 'text', text: 'listing **it**' },
    { type: 'tool_call', id: 't1', name: 'bash', args: { command: 'ls' } }] };
  conv.sync({ messages: [text('u1', 'user', 'hi'), text('a1', 'assistant', 'hello *there*'),
                         text('u2', 'user', 'list the files'), call] });
  const markdown = conv.el.querySelector('[data-id="a2"] .markdown').firstChild;
  const touched = new Set();
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      const at = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const li = at === conv.el ? null : at.closest('li');
      if (li) touched.add(li.dataset.id);
      for (const added of r.addedNodes) if (at === conv.el) touched.add(added.dataset.id);
    }
  });
  observer.observe(conv.el, { subtree: true, childList: true, characterData: true, attributes: true });
  conv.receive({ type: 'tool_call', tool_call_id: 't1', name: 'bash', args: { command: 'ls' } });
  const running = conv.el.querySelector('.tool').dataset.state;
  conv.receive({ type: 'tool_result', tool_call_id: 't1', message_id: 'r1',
                 content: { kind: 'text', text: 'a.txt' }, exit_code: 0, duration_ms: 12 });
  await new Promise((r) => setTimeout(r, 0));
  observer.disconnect();
  const card = conv.el.querySelector('.tool');
  return { touched: [...touched].sort(), running, state: card.dataset.state,
           result: card.querySelector('.result-text').textContent,
           took: card.querySelector('.tool-took').textContent,
           cards: conv.el.querySelectorAll('.tool').length,
           hidden: conv.el.querySelector('[data-id="r1"]').hidden,
           sameMarkdown: conv.el.querySelector('[data-id="a2"] .markdown').firstChild === markdown };
}"""


async def test_a_tool_calls_events_re_render_only_the_message_holding_it(page: Any) -> None:
    """A tool_call and its tool_result re-render the message with the call (its card running,
    then done with the result and the time) and add the result's hidden item; the other messages'
    elements see no mutation at all, and the message's markdown is not rebuilt.

    Covers: R9.4.7
    """
    r = await page.evaluate(ONLY_WHAT_CHANGED)
    assert r["touched"] == ["a2", "r1"]
    assert r["running"] == "running"
    assert r["state"] == "done"
    assert r["result"] == "a.txt"
    assert r["took"] == "exit 0 · 12 ms"
    assert r["cards"] == 1
    assert r["hidden"] is True
    assert r["sameMarkdown"] is True


EARLY_CARD = """async () => {
  const { Conversation } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  conv.toolCall({ tool_call_id: 't9', name: 'read', args: { path: 'x' }, read_only: true });
  const before = [...conv.el.querySelectorAll('.tool')].map((c) => c.closest('li').dataset.id || 'own');
  conv.receive({ type: 'message_complete', message: { id: 'a9', role: 'assistant',
                 content: [{ type: 'tool_call', id: 't9', name: 'read', args: { path: 'x' } }] } });
  const cards = [...conv.el.querySelectorAll('.tool')];
  return { before, after: cards.map((c) => [c.closest('li').dataset.id, c.dataset.state]),
           items: conv.el.children.length };
}"""


async def test_a_card_shown_before_its_message_becomes_that_messages(page: Any) -> None:
    """A tool_call event for a call no message holds yet shows a card of its own; when the message
    with the call arrives, the card is that message's (running still), and only one is left.

    Covers: R9.4.13
    """
    r = await page.evaluate(EARLY_CARD)
    assert r["before"] == ["own"]
    assert r["after"] == [["a9", "running"]]
    assert r["items"] == 1

"""The conversation's virtualization and its coalesced deltas in real Chromium (issue 29's scroll and
streaming targets): a conversation of thousands of rendered messages keeps only a window of them in
the DOM, moves it as the reader scrolls without a blank viewport, a jump or a re-created element,
and holds the reader's place while a reply streams below."""

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
    home = write_scripted_home(tmp_path_factory.mktemp("web-virtual") / "home", [])
    daemon: DaemonProcess
    async for daemon in start_daemon(home):
        context = await enrolled_context(chromium, daemon)
        yield await open_app(context)
        await context.close()


VIRTUAL = """async () => {
  const { Conversation, KEEP } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  const el = conv.el;
  el.style.height = '600px';
  document.querySelector('main').replaceChildren(el);
  const messages = [];
  for (let i = 0; i < 800; i++) {
    const words = 'words of varying length '.repeat((i % 7) * 2);  // items of different heights
    const content = [{ type: 'text', text: `message ${i} ${words}` }];
    messages.push({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content });
  }
  conv.sync({ messages });
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  // every earlier page shown, a frame apart, as a reader (and the bench) does: once the window
  // moves, the pages shown go, unmeasured, above it
  while (conv.earlier.length) {
    conv.showEarlier();
    await frame();
  }
  for (const li of conv.messages.values()) li.seen = true;  // a mark a re-created element would not carry
  const inDom = () => el.querySelectorAll(':scope > .message').length;
  const box = el.getBoundingClientRect();
  // the message at the top of the viewport, and whether it is in view (not a spacer's blank)
  const top = () => {
    const li = [...el.querySelectorAll(':scope > .message')]
      .find((m) => m.getBoundingClientRect().bottom > box.top);
    if (!li) return { n: -1, shown: false };
    return { n: Number(li.dataset.id.slice(1)), shown: li.getBoundingClientRect().top < box.bottom };
  };
  let most = 0, blank = 0, fresh = 0, moved = 0;
  // one step of `by` px and a frame: the message that was at the top moved by the step, no more
  // (a window moved above it keeps it in place), and the viewport shows a message
  const step = async (by) => {
    const before = top();
    const offset = el.querySelector(`[data-id="m${before.n}"]`).getBoundingClientRect().top;
    const from = el.scrollTop;
    el.scrollTop += by;
    const stepped = el.scrollTop - from;
    await frame();
    const now = top();
    if (!now.shown) blank++;
    const li = el.querySelector(`[data-id="m${before.n}"]`);
    if (li && Math.abs(li.getBoundingClientRect().top - (offset - stepped)) > 1) moved++;
    most = Math.max(most, inDom());
    fresh += [...el.querySelectorAll(':scope > .message')].filter((m) => !m.seen).length;
    return now.n;
  };
  const up = [];
  while (el.scrollTop > 0) up.push(await step(-300));
  const first = top();
  const seen = [];
  while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) seen.push(await step(300));
  const upward = up.every((n, i) => i === 0 || n <= up[i - 1]);
  const ordered = seen.every((n, i) => i === 0 || n >= seen[i - 1]);
  const last = [...el.querySelectorAll(':scope > .message')].pop();
  const end = { id: last.dataset.id, shown: last.getBoundingClientRect().bottom <= box.bottom + 1 };
  el.scrollTop = Math.round(el.scrollHeight / 2);  // a jump into the middle (a dragged scrollbar)
  await frame();
  await frame();
  const middle = top();
  // a reply streams while the reader is up there: their place holds; at the end it is all there
  for (let i = 0; i < 50; i++)
    conv.delta({ message_id: 'live', block_index: 0, kind: 'text', text_delta: 'x' });
  conv.flush();
  await frame();
  await frame();
  const held = top();
  el.scrollTop = el.scrollHeight;
  await frame();
  await frame();
  const live = el.querySelector('.message.streaming');
  return { KEEP, first, up: up.length, upward, seen: seen.length, ordered,
           most, blank, fresh, moved, end, middle, held,
           live: live ? [live.textContent, live.getBoundingClientRect().bottom <= box.bottom + 1] : null,
           total: conv.messages.size };
}"""


async def test_a_long_conversation_keeps_a_window_of_it_in_the_dom_as_the_reader_scrolls(page):
    """800 messages, every earlier page shown, then scrolled up to the top and down to the bottom
    a step a frame: the DOM never holds more than the window around the viewport, the viewport is
    never blank, the message at its top only moves by the scroll (even where the window brings back
    messages never measured), none is re-created, the end is reached; a jump to the middle shows the middle;
    a reply streaming meanwhile leaves the reader's place alone and is whole at the end.

    Covers: R9.4.7
    """
    r = await page.evaluate(VIRTUAL)
    keep = r["KEEP"]
    assert r["total"] == 800
    assert r["first"] == {"n": 0, "shown": True}
    assert r["up"] > 50
    assert r["upward"]
    assert r["seen"] > 50
    assert r["ordered"]
    assert r["most"] <= 2 * keep + 40  # the window (and the slack it moves by), not 800
    assert r["blank"] == 0
    assert r["moved"] == 0
    assert r["fresh"] == 0
    assert r["end"] == {"id": "m799", "shown": True}
    assert 250 < r["middle"]["n"] < 550
    assert r["middle"]["shown"]
    assert r["held"] == r["middle"]
    assert r["live"] == ["x" * 50, True]

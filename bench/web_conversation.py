"""The web client's conversation alone, in real Chromium (issue 29): a 5,000-message window given to
a Conversation (js/render/conversation.js, the module the page uses), measured on a blank page of
the app so nothing else runs. Per run, a fresh tab:

- the first window rendered (the sync of 5,000 messages: the last 100 drawn);
- every earlier page rendered ("Show earlier messages" until none is left: 5,000 messages drawn);
- the JS heap the conversation then holds (after a collection, over the tab's heap before it).

Prints the medians and saves bench/results/web_conversation.json. It compares two bundles of the
client better than bench/web_client.py can on a loaded machine: no daemon streams, no scroll.

    .venv/bin/python bench/web_conversation.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
from browser_steps import enrolled_context

from harness import save_results
from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.chromium import launched

MESSAGES = 5000

DRAW = """async (n) => {
  const { Conversation } = await import('/app/js/render/conversation.js');
  const conv = new Conversation(() => {});
  conv.el.style.height = '800px';
  document.querySelector('main').replaceChildren(conv.el);
  const messages = [];
  for (let i = 0; i < n; i++) {
    const text = `message ${i}: ` + 'some words of a long session '.repeat(6);
    messages.push({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text }] });
  }
  const t0 = performance.now();
  conv.sync({ messages });
  const first = performance.now() - t0;
  const t1 = performance.now();
  while (conv.earlier.length) conv.showEarlier();
  const all = performance.now() - t1;
  window.kept = conv;  // held, so the collection below keeps it
  return [first, all, conv.messages.size];
}"""


async def heap(cdp: Any) -> float:
    await cdp.send("HeapProfiler.collectGarbage")
    got = await cdp.send("Performance.getMetrics")
    return next(m["value"] for m in got["metrics"] if m["name"] == "JSHeapUsedSize") / 2**20


async def run(runs: int) -> dict[str, Any]:
    firsts, alls, heaps = [], [], []
    with tempfile.TemporaryDirectory(prefix="shard-web-conv-") as tmp:
        daemon = await DaemonProcess.start(write_scripted_home(Path(tmp) / "home", []))
        try:
            async with launched() as browser:
                context = await enrolled_context(browser, daemon)
                for _ in range(runs):
                    page = await context.new_page()
                    await page.goto("/")
                    cdp = await context.new_cdp_session(page)
                    await cdp.send("Performance.enable")
                    before = await heap(cdp)
                    first, all_, drawn = await page.evaluate(DRAW, MESSAGES)
                    assert drawn == MESSAGES, drawn
                    heaps.append(await heap(cdp) - before)
                    firsts.append(first)
                    alls.append(all_)
                    await page.close()
                await context.close()
        finally:
            await daemon.kill()
    return {
        "messages": MESSAGES,
        "runs": runs,
        "first_window_ms": {
            "runs": [round(x, 1) for x in firsts],
            "median": round(statistics.median(firsts), 1),
        },
        "all_pages_ms": {"runs": [round(x, 1) for x in alls], "median": round(statistics.median(alls), 1)},
        "heap_mb": {"runs": [round(x, 2) for x in heaps], "median": round(statistics.median(heaps), 2)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh tabs measured (medians reported)")
    result = asyncio.run(run(parser.parse_args().runs))
    print(f"{MESSAGES} messages: first window {result['first_window_ms']['median']} ms,", end=" ")
    print(f"every page {result['all_pages_ms']['median']} ms,", end=" ")
    print(f"JS heap held {result['heap_mb']['median']} MB (medians of {result['runs']})")
    print(f"saved {save_results('web_conversation', result)}")


if __name__ == "__main__":
    main()

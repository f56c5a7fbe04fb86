"""The web client in real Chromium (issue 29's targets): one daemon with the scripted provider, one
enrolled page. Measures

- first load: from navigation to an interactive agent list (20 agents listed), on loopback;
- a 5,000-message session: from the click on its row to its last message on screen ("usable"); then
  every earlier page loaded and a full scroll from top to bottom, one step a frame (frame times
  p50/p95/max, from performance.now() in each callback and from rAF's own frame timestamp, and
  the main thread's work per frame); the renderer's memory once fully loaded (the
  JS heap, and the renderer process's RSS from /proc);
- 20 agents streaming at once, one of them open: the page's main thread busy share (Chromium's
  cumulative TaskDuration over the wall time);
- the bundle's size (static/bundle.json: bytes and gzipped).

Prints the figures and saves bench/results/web_client.json.

    .venv/bin/python bench/web_client.py            # the full run (about a minute)
    .venv/bin/python bench/web_client.py --quick    # 250 messages, 4 agents, 1 s of streaming, 1 first load
    .venv/bin/python bench/web_client.py --trace /tmp/t  # with traces of the scroll and the streaming
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
from browser_steps import write_session

from harness import save_results
from shard.daemon.web.static_files import STATIC
from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.chromium import launched

STREAM = {
    "blocks": [{"type": "text", "text": "streaming a long answer, piece by piece. " * 200}],
    "chunk": 6,
    "delay_ms": 15,
}

OPEN_AND_WAIT = """async ([id, last]) => {
  const row = document.querySelector(`.agent-row[data-agent-id="${id}"] .agent-open`);
  const t0 = performance.now();
  row.click();
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const items = document.querySelectorAll('#conversation > .message[data-id]');
    const end = items[items.length - 1];
    if (end && end.textContent.includes(last)) return performance.now() - t0;
  }
}"""

LOAD_ALL = """async () => {
  const conv = document.getElementById('conversation');
  for (let i = 0; i < 1000 && conv.querySelector(':scope > .show-earlier'); i++) {
    conv.querySelector(':scope > .show-earlier button').click();
    await new Promise((r) => requestAnimationFrame(r));
  }
  // every message rendered (as an element); those far from the viewport are detached (virtualized)
  const shown = window.shard.views.get(window.shard.shown).conversation;
  return [shown.messages.size, conv.querySelectorAll(':scope > .message').length];
}"""

SCROLL = """async () => {
  const conv = document.getElementById('conversation');
  conv.scrollTop = 0;
  await new Promise((r) => requestAnimationFrame(r));
  const frames = [], stamps = [];
  let last = performance.now();
  let lastStamp = await new Promise((r) => requestAnimationFrame(r));
  const step = Math.max(120, conv.clientHeight / 3);
  while (conv.scrollTop + conv.clientHeight < conv.scrollHeight - 1) {
    conv.scrollTop += step;
    const stamp = await new Promise((r) => requestAnimationFrame(r));
    const now = performance.now();
    frames.push(now - last);
    stamps.push(stamp - lastStamp);
    last = now;
    lastStamp = stamp;
  }
  // when each callback ran (jitters with the work before it in its frame), and each frame's own
  // start (rAF's timestamp: a frame skipped shows as 33 ms, a callback late within its frame does not)
  return [frames, stamps];
}"""


def _parents() -> dict[int, int]:
    """Every live process's parent (pid -> ppid), from /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def _descends_from(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    while pid > 1:
        pid = parents.get(pid, 0)
        if pid == ancestor:
            return True
    return False


def largest_renderer() -> tuple[int, float]:
    """This bench's chromium renderer process with the largest RSS (the page's; others are spare or
    utility): its pid and its RSS in MB ((0, 0.0) when none runs). Only the processes under this
    one: in the test suite other workers' Chromiums run beside it, and one of their renderers may be
    larger and exit before its CPU is read."""
    best, pid = 0, 0
    parents = _parents()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not _descends_from(int(entry.name), os.getpid(), parents):
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if not any(b"--type=renderer" in a for a in argv):
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:") and int(line.split()[1]) > best:
                    best, pid = int(line.split()[1]), int(entry.name)
        except OSError:
            continue
    return pid, best / 1024


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def metrics(cdp: Any) -> dict[str, float]:
    got = await cdp.send("Performance.getMetrics")
    return {m["name"]: m["value"] for m in got["metrics"]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def traced(browser: Any, page: Any, trace: Path | None, name: str) -> Any:
    """Starts a Chromium trace of the page into trace/name.json (when tracing); what stops it."""
    if trace is None:
        return None
    await asyncio.to_thread(trace.mkdir, parents=True, exist_ok=True)
    await browser.start_tracing(page=page, path=str(trace / f"{name}.json"), categories=TRACE_CATEGORIES)
    return browser.stop_tracing


TRACE_CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.frame",
    "toplevel",
    "blink",
    "cc",
    "v8.execute",
]


async def run(quick: bool, trace: Path | None = None) -> dict[str, Any]:
    # the quick run is the test suite's smoke run (tests/bench): every step still runs (250 messages
    # are still three "show earlier" pages), on the least that proves it, since each second of
    # streaming and each page load is CPU the suite's other tests wait for
    messages = 250 if quick else 5000
    agents = 4 if quick else 20
    stream_s = 1.0 if quick else 10.0
    load_runs = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="shard-web-bench-") as tmp:
        root = Path(tmp)
        home = write_scripted_home(root / "home", [STREAM], loop=True, record=False)
        daemon = await DaemonProcess.start(home)
        try:
            client = await daemon.unix()
            ids = []
            for n in range(agents):
                cwd = root / f"project-{n:02d}"
                cwd.mkdir()
                reply, _ = await client.request({"type": "agent.create", "id": f"c{n}", "cwd": str(cwd)})
                ids.append(reply["data"]["agent_id"])
            long_cwd = root / "long-project"
            long_cwd.mkdir()
            texts = [f"message {i}: " + "some words of a long session " * 6 for i in range(messages)]
            session = write_session(home, long_cwd, texts)
            reply, _ = await client.request(
                {"type": "agent.create", "id": "long", "cwd": str(long_cwd), "session_id": session}
            )
            long_agent = reply["data"]["agent_id"]
            async with launched() as browser:
                context = await browser.new_context(
                    base_url=f"http://127.0.0.1:{daemon.port}", viewport={"width": 1400, "height": 900}
                )
                page = await context.new_page()
                await page.goto(daemon.enrollment_link)
                await page.wait_for_function("() => document.querySelectorAll('.agent-row').length > 0")
                await page.close()

                # first load: navigation start to the agent list rendered, every agent in it
                loads = []
                for _ in range(load_runs):
                    page = await context.new_page()
                    await page.goto("/")
                    loads.append(
                        await page.evaluate(
                            "async (n) => { for (;;) {"
                            " if (document.querySelectorAll('.agent-row').length >= n)"
                            " return performance.now();"
                            " await new Promise((r) => requestAnimationFrame(r)); } }",
                            agents + 1,
                        )
                    )
                    await page.close()

                page = await context.new_page()
                cdp = await context.new_cdp_session(page)
                await cdp.send("Performance.enable")
                await page.goto("/")
                await page.wait_for_function(
                    f"() => document.querySelectorAll('.agent-row').length >= {agents + 1}"
                )
                usable = await page.evaluate(OPEN_AND_WAIT, [long_agent, texts[-1][:40]])
                rendered, in_dom = await page.evaluate(LOAD_ALL)
                stop = await traced(browser, page, trace, "scroll")
                scroll_before = await metrics(cdp)
                frames, stamps = await page.evaluate(SCROLL)
                scroll_task = (await metrics(cdp))["TaskDuration"] - scroll_before["TaskDuration"]
                if stop:
                    await stop()
                await cdp.send("HeapProfiler.collectGarbage")
                heap = (await metrics(cdp))["JSHeapUsedSize"] / 2**20
                rss = largest_renderer()[1]
                nodes = (await metrics(cdp))["Nodes"]

                # 20 agents streaming, one of them open (the first)
                await page.evaluate(
                    OPEN_AND_WAIT.replace("if (end && end.textContent.includes(last))", "if (true)"),
                    [ids[0], ""],
                )
                for n, agent in enumerate(ids):  # a prompt needs an attached client
                    await client.request({"type": "agent.attach", "id": f"a{n}", "agent_id": agent})
                    await client.send({"type": "prompt", "agent_id": agent, "message": f"stream {n}"})
                await page.wait_for_function(
                    "() => document.querySelector('#conversation .message.streaming')"
                )
                pid = largest_renderer()[0]
                stop = await traced(browser, page, trace, "streaming")
                before, cpu0, t0 = await metrics(cdp), cpu_seconds(pid), time.monotonic()
                await asyncio.sleep(stream_s)
                after, cpu1, wall = await metrics(cdp), cpu_seconds(pid), time.monotonic() - t0
                if stop:
                    await stop()
                busy = (after["TaskDuration"] - before["TaskDuration"]) / wall
                script = (after["ScriptDuration"] - before["ScriptDuration"]) / wall
                layout = (
                    after["LayoutDuration"]
                    + after["RecalcStyleDuration"]
                    - before["LayoutDuration"]
                    - before["RecalcStyleDuration"]
                ) / wall
                for agent in ids:
                    await client.send({"type": "abort", "agent_id": agent})
                await context.close()
            await client.close()
        finally:
            await daemon.kill()
    bundle = json.loads((STATIC / "bundle.json").read_text())
    return {
        "messages": messages,
        "agents": agents,
        "first_load_ms": {"runs": [round(x, 1) for x in loads], "median": round(statistics.median(loads), 1)},
        "long_session": {
            "usable_after_click_ms": round(usable, 1),
            "messages_rendered_when_fully_loaded": rendered,
            "messages_in_dom_when_fully_loaded": in_dom,
            "scroll_frames": len(frames),
            "frame_ms": {
                "p50": round(percentile(frames, 0.5), 1),
                "p95": round(percentile(frames, 0.95), 1),
                "max": round(max(frames), 1),
            },
            "frame_start_ms": {
                "p50": round(percentile(stamps, 0.5), 1),
                "p95": round(percentile(stamps, 0.95), 1),
                "max": round(max(stamps), 1),
            },
            # the main thread's work per frame (TaskDuration over the scroll / frames): what the page
            # costs a frame, apart from how long a loaded machine made it wait for a core
            "main_thread_ms_per_frame": round(1000 * scroll_task / len(frames), 2),
            "js_heap_mb": round(heap, 1),
            "renderer_rss_mb": round(rss, 1),
            "dom_nodes": int(nodes),
        },
        "streaming": {
            "agents": agents,
            "seconds": stream_s,
            "main_thread_busy_pct": round(100 * busy, 1),
            # the renderer's CPU time (every thread): what the page costs, without the time its
            # tasks waited for a core while 20 runtimes and the daemon ran on the same two
            "renderer_cpu_pct": round(100 * (cpu1 - cpu0) / wall, 1),
            "script_pct": round(100 * script, 1),
            "style_and_layout_pct": round(100 * layout, 1),
        },
        "bundle": {
            "bytes": bundle["bytes"],
            "gzip_bytes": bundle["gzip_bytes"],
            "files": len(bundle["files"]),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: small session, few agents")
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="DIR",
        help="save Chromium traces of the scroll and the streaming (DIR/scroll.json, DIR/streaming.json;"
        " they slow both, so the figures of such a run are not comparable)",
    )
    args = parser.parse_args()
    result = asyncio.run(run(args.quick, args.trace))
    ls, st, b, frame = (
        result["long_session"],
        result["streaming"],
        result["bundle"],
        result["long_session"]["frame_ms"],
    )
    print(
        f"first load to a list of {result['agents'] + 1} agents:",
        f"{result['first_load_ms']['median']} ms (median of {len(result['first_load_ms']['runs'])})",
    )
    print(f"{result['messages']}-message session: usable {ls['usable_after_click_ms']} ms after the click")
    print(
        f"full scroll ({ls['messages_rendered_when_fully_loaded']} messages rendered,",
        f"{ls['messages_in_dom_when_fully_loaded']} of them in the DOM):",
        end=" ",
    )
    print(f"frame p50 {frame['p50']} ms, p95 {frame['p95']} ms, max {frame['max']} ms;", end=" ")
    print(f"main thread {ls['main_thread_ms_per_frame']} ms a frame;", end=" ")
    start = ls["frame_start_ms"]
    print(f"by rAF's timestamp p50 {start['p50']} ms, p95 {start['p95']} ms, max {start['max']} ms")
    print(
        f"fully loaded: JS heap {ls['js_heap_mb']} MB,",
        f"renderer RSS {ls['renderer_rss_mb']} MB, {ls['dom_nodes']} nodes",
    )
    print(
        f"{st['agents']} agents streaming, one open: main thread busy {st['main_thread_busy_pct']} %", end=" "
    )
    print(f"(script {st['script_pct']} %, style+layout {st['style_and_layout_pct']} %;", end=" ")
    print(f"renderer CPU {st['renderer_cpu_pct']} %)")
    print(
        f"bundle: {b['bytes'] / 1024:.1f} KiB, {b['gzip_bytes'] / 1024:.1f} KiB gzipped, {b['files']} files"
    )
    print(f"saved {save_results('web_client' + ('_quick' if args.quick else ''), result)}")


if __name__ == "__main__":
    main()

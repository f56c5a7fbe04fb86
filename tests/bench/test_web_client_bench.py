"""``bench/web_client.py --quick`` runs end to end in real Chromium and its report holds together:
the session it opens is rendered whole once fully loaded, the scroll took frames, the streaming
agents kept the main thread busy some of the time, and the bundle's size is the build's. Its
timings are not judged here (benches judge those)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from shard.daemon.web.static_files import STATIC

pytestmark = pytest.mark.slow

BENCH = Path(__file__).parents[2] / "bench" / "web_client.py"


@pytest.mark.long
async def test_the_quick_web_client_bench_reports_a_coherent_run():
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BENCH),
        "--quick",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    printed, _ = await asyncio.wait_for(proc.communicate(), 600)
    assert proc.returncode == 0, printed.decode()
    assert "usable" in printed.decode(), "the figures are printed too"
    report = json.loads((BENCH.parent / "results" / "web_client_quick.json").read_text())
    session = report["long_session"]
    assert session["messages_rendered_when_fully_loaded"] == report["messages"]
    assert session["scroll_frames"] > 0
    assert session["frame_ms"]["p50"] <= session["frame_ms"]["p95"] <= session["frame_ms"]["max"]
    assert 0 < report["streaming"]["main_thread_busy_pct"] <= 100  # a share of the wall time
    assert report["bundle"]["bytes"] == json.loads((STATIC / "bundle.json").read_text())["bytes"]

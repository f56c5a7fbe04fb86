"""``bench/scale.py --quick`` runs end to end and its report holds together: every delta reached
every client attached to its agent, the figures have their shape and order, every runtime is alive,
and the config edits left one template. Its timings are not judged here (benches judge those)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).parents[2] / "bench" / "scale.py"


async def test_the_quick_scale_bench_reports_a_coherent_run(tmp_path: Path):
    out = tmp_path / "scale.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BENCH),
        "--quick",
        "--runs",
        "1",
        "--out",
        str(out),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    printed, _ = await asyncio.wait_for(proc.communicate(), 600)
    assert proc.returncode == 0, printed.decode()
    report = orjson.loads(out.read_bytes())
    assert "latency_ms_p99" in printed.decode(), "the figures are printed too"

    assert report["deltas_in"] == report["streaming"] * report["deltas"]
    assert report["delta_frames_out"] == report["deltas_in"] * (report["watchers"] + 1), (
        "each streamed delta reached every watcher and the client that drives its agent"
    )
    assert 0 <= report["latency_ms_p50"] <= report["latency_ms_p99"] <= report["latency_ms_max"]
    assert report["worst_client_p99_ms"] <= report["latency_ms_max"]
    assert report["daemon_cpu_s"] >= 0
    assert report["runtimes_live"] == report["agents"] + report["config_edits"]
    assert report["config_edits"] >= 1
    assert report["templates_live"] == 1, "a retired template does not stay"
    parts = report["pss_daemon_mb"] + report["pss_templates_mb"] + report["pss_runtimes_mb"]
    assert report["pss_daemon_mb"] > 0
    assert report["pss_runtimes_mb"] > 0
    assert report["pss_total_mb"] == pytest.approx(parts, abs=0.5)
    assert report["creates_s"] > 0
    assert isinstance(report["lag_grows"], bool)
    lags = report["lag_by_client"]
    assert len(lags) == report["clients"]
    assert {lag["transport"] for lag in lags} == {"ws", "unix"}
    assert [lag["attached"] for lag in lags[: report["watchers"]]] == [report["agents"]] * report["watchers"]

"""What every benchmark here shares: how to run ``shard``, how to read a process's RSS, and where
the figures are saved (``bench/results/<name>.json``)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def shard_argv() -> list[str]:
    """The installed console script next to this interpreter (what users run), else ``-m shard``."""
    script = Path(sys.executable).with_name("shard")
    return [str(script)] if script.exists() else [sys.executable, "-m", "shard"]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def save_results(name: str, result: Any) -> Path:
    out = Path(__file__).parent / "results" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return out


async def median_request_ms(client: Any, message: dict[str, Any], runs: int) -> tuple[float, dict[str, Any]]:
    """``message`` sent ``runs`` times (each must succeed): the median round trip in ms, and the last
    answer's data."""
    times = []
    data: dict[str, Any] = {}
    for n in range(runs):
        started = time.perf_counter()
        resp, _ = await client.request({**message, "id": f"b-{n}"})
        times.append(time.perf_counter() - started)
        assert resp["success"] is True, resp
        data = resp.get("data") or {}
    return statistics.median(times) * 1000, data


def report(name: str, results: dict[str, Any]) -> None:
    """Print ``results`` one figure a line, and save them as ``results/<name>.json``."""
    for key, value in results.items():
        print(f"{key:42} {value:8.2f}" if isinstance(value, float) else f"{key:42} {value}")
    print(f"saved {save_results(name, results)}")

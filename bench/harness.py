"""What every benchmark here shares: how to run ``shard``, how to read a process's RSS, and where
the figures are saved (``bench/results/<name>.json``)."""

from __future__ import annotations

import json
import sys
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

"""Start-up of ``shard agent --stdio``: spawn → hello, spawn → sync, and RSS once sync is out.

Two set-ups: no configuration at all, and both API providers configured (anthropic as the default
model, keys in the environment) — provider SDKs must not be imported before sync, so the figures
should match. Prints medians (and min/max) over N runs and saves them to bench/results/startup.json.
Targets on the reference machine (2 cores): hello <= 150 ms, RSS after sync <= 40 MB.

    python bench/startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import rss_mb, save_results, shard_argv

TARGET_HELLO_MS = 150.0
TARGET_RSS_MB = 40.0


PROVIDERS_TOML = """default_model = "anthropic/claude-sonnet-5-5"

[[providers]]
name = "local"
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
models = [{ id = "qwen2.5-coder", context_window = 32768 }]
"""
PROVIDER_ENV = {"ANTHROPIC_API_KEY": "bench-not-a-key", "OPENAI_API_KEY": "bench-not-a-key"}


def one_run(home: Path, cwd: Path, extra_env: dict[str, str]) -> tuple[float, float, float, float, float]:
    env = {**os.environ, "SHARD_HOME": str(home), **extra_env}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*shard_argv(), "agent", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    hello = proc.stdout.readline()
    t_hello = time.perf_counter()
    sync = proc.stdout.readline()
    t_sync = time.perf_counter()
    assert json.loads(hello)["type"] == "hello"
    assert json.loads(sync)["type"] == "sync"
    rss = rss_mb(proc.pid)
    # ready: the runtime has loaded and answers commands (sync goes out before that)
    proc.stdin.write(b'{"type":"list_modes","id":"ready"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == "ready"
    t_ready = time.perf_counter()
    rss_ready = rss_mb(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=10)
    return (t_hello - t0) * 1000, (t_sync - t0) * 1000, rss, (t_ready - t0) * 1000, rss_ready


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 2),
        "min": round(min(values), 2),
        "max": round(max(values), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    result: dict[str, object] = {
        "runs": args.runs,
        "targets": {"spawn_to_hello_ms": TARGET_HELLO_MS, "rss_after_sync_mb": TARGET_RSS_MB},
        "python": sys.version.split()[0],
        "command": " ".join(shard_argv()),
    }
    print(f"shard agent --stdio start-up, median of {args.runs} runs")
    for label, toml, env in (("bare", "", {}), ("providers", PROVIDERS_TOML, PROVIDER_ENV)):
        with tempfile.TemporaryDirectory() as tmp:
            home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
            home.mkdir()
            cwd.mkdir()
            (home / "config.toml").write_text(toml)
            one_run(home, cwd, env)  # warm the page cache; not counted
            runs = [one_run(home, cwd, env) for _ in range(args.runs)]
        hello = summary([r[0] for r in runs])
        sync = summary([r[1] for r in runs])
        rss = summary([r[2] for r in runs])
        ready = summary([r[3] for r in runs])
        rss_ready = summary([r[4] for r in runs])
        result[label] = {
            "spawn_to_hello_ms": hello,
            "spawn_to_sync_ms": sync,
            "rss_after_sync_mb": rss,
            "spawn_to_first_answer_ms": ready,
            "rss_serving_mb": rss_ready,
            "meets_targets": hello["median"] <= TARGET_HELLO_MS and rss["median"] <= TARGET_RSS_MB,
        }
        print(f"  [{label}]")
        print(
            f"  spawn -> hello   {hello['median']:7.1f} ms  (min {hello['min']}, max {hello['max']};"
            f" target <= {TARGET_HELLO_MS})"
        )
        print(f"  spawn -> sync    {sync['median']:7.1f} ms  (min {sync['min']}, max {sync['max']})")
        print(
            f"  RSS after sync   {rss['median']:7.1f} MB  (min {rss['min']}, max {rss['max']};"
            f" target <= {TARGET_RSS_MB})"
        )
        print(f"  spawn -> first answer {ready['median']:7.1f} ms (runtime loaded, list_modes answered)")
        print(f"  RSS serving      {rss_ready['median']:7.1f} MB")
    out = save_results("startup", result)
    print(f"  saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

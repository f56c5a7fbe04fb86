"""What collecting the test suite costs (issue 31 item 4): ``./test`` runs pytest-xdist, whose every
worker imports every test module to collect (and tests/assert_cache.py collects once more per core),
so a third-party import made at collection is paid once a worker, though one worker runs its tests.

Runs ``pytest --collect-only`` ``--runs`` times and prints the median CPU (user + system) of one
collection, then, from one more run, the heavy packages imported by then. With ``--other DIR`` (a
folder with another version's ``tests/`` and ``pyproject.toml``, e.g. ``git archive <commit> tests
pyproject.toml | tar -x -C DIR``) the runs alternate between the two, so the machine's drift falls on
both alike. Saves bench/results/collection.json.

    python bench/collection.py [--runs 5] [--other /tmp/base]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import save_results

ROOT = Path(__file__).resolve().parent.parent
# what a test module should import only where its tests run it
HEAVY = ("acp", "mcp", "textual", "rich", "aiohttp", "playwright", "anthropic", "openai", "uvicorn")
_PLUGIN = f"""
import json, os, sys
def pytest_collection_finish(session):
    loaded = sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r}))
    with open(os.environ["COLLECTION_HEAVY"], "w") as f:
        json.dump(loaded, f)
"""


def collect(folder: Path, *extra: str, env: dict[str, str] | None = None) -> float:
    """One ``pytest --collect-only`` in ``folder``: its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *extra],
        cwd=folder, env=env, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"collection failed in {folder}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def heavy_imports(folder: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "collection_heavy.py").write_text(_PLUGIN)
        out = Path(tmp) / "heavy.json"
        env = {**os.environ, "PYTHONPATH": tmp, "COLLECTION_HEAVY": str(out)}
        collect(folder, "-p", "collection_heavy", env=env)
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--other", type=Path, help="a folder with another version's tests/ to compare")
    args = parser.parse_args()
    folders = {"this": ROOT, **({"other": args.other.resolve()} if args.other else {})}
    for folder in folders.values():
        collect(folder)  # the first run writes the rewritten test modules' caches: not counted
    cpu: dict[str, list[float]] = {name: [] for name in folders}
    for _ in range(args.runs):
        for name, folder in folders.items():
            cpu[name].append(collect(folder))
    result = {
        name: {
            "folder": str(folder),
            "cpu_s_median": round(statistics.median(cpu[name]), 2),
            "cpu_s_runs": [round(s, 2) for s in cpu[name]],
            "heavy_imported": heavy_imports(folder),
        }
        for name, folder in folders.items()
    }
    for name, figures in result.items():
        print(
            f"{name:5}  collection CPU median {figures['cpu_s_median']:.2f} s over {args.runs} runs"
            f"  heavy imports: {', '.join(figures['heavy_imported']) or 'none'}"
        )
    print(f"saved {save_results('collection', result)}")


if __name__ == "__main__":
    main()

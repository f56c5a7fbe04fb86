"""What the bash sandbox adds per call (issue 19; target ≤ 15 ms on the 2-core machine).

Runs the same short command (``true``, and ``echo hi > f`` in a project folder) through the bash
tool's own process path, plain and inside the sandbox (``shard.agent.sandbox.bwrap``), alternating, and
prints medians and the added milliseconds. Usage: ``.venv/bin/python bench/sandbox.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness import save_results
from shard.agent.sandbox.bwrap import configured
from shard.agent.tools.base import ToolContext
from shard.agent.tools.bash import BashParams, BashTool


async def _once(tool: BashTool, ctx: ToolContext, command: str) -> float:
    start = time.perf_counter()
    out = await tool.execute(BashParams(command=command), ctx)
    elapsed = (time.perf_counter() - start) * 1000
    assert out.exit_code == 0, out
    return elapsed


async def main(runs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        sandbox = configured("auto", shard_home=Path(tmp) / "home")
        if not sandbox.active:
            raise SystemExit(f"no sandbox here: {sandbox.why}")
        tool = BashTool()
        plain = ToolContext(cwd=project)
        boxed = ToolContext(cwd=project, sandbox=sandbox)
        figures: dict[str, object] = {"runs": runs}
        for name, command in (("true", "true"), ("write", "echo hi > f")):
            times: dict[str, list[float]] = {"plain": [], "sandbox": []}
            for _ in range(3):  # warm the page cache for both paths
                await _once(tool, plain, command)
                await _once(tool, boxed, command)
            for _ in range(runs):
                times["plain"].append(await _once(tool, plain, command))
                times["sandbox"].append(await _once(tool, boxed, command))
            p, s = statistics.median(times["plain"]), statistics.median(times["sandbox"])
            figures[name] = {"plain_ms": round(p, 2), "sandbox_ms": round(s, 2), "added_ms": round(s - p, 2)}
            print(
                f"{name:6} plain {p:6.2f} ms   sandbox {s:6.2f} ms   added {s - p:6.2f} ms (median of {runs})"
            )
        return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    result = asyncio.run(main(parser.parse_args().runs))
    print(f"saved to {save_results('sandbox', result)}")

"""The read-only file tree's cost through a real daemon (unix socket): ``fs.list`` of a folder of
5,000 files beside 5,000 ignored ones, of a small folder, ``fs.read`` of a 1 MiB file (cut at the
limit) and of a 4 KB one, and ``fs.complete`` in a folder of 2,000 directories. Each is the round
trip a client sees (the daemon reads in a worker thread; the ignore rules are read per request).

    python bench/fs_tree.py [--runs 20]

Prints medians and saves them to bench/results/fs_tree.json.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from harness import median_request_ms, report
from shard.testing import DaemonProcess, write_scripted_home


def make_folder(root: Path) -> Path:
    project = root / "project"
    (project / "big").mkdir(parents=True)
    (project / "big" / ".gitignore").write_text("*.tmp\n")
    for i in range(5000):
        (project / "big" / f"file-{i:05d}.py").write_text("x = 1\n")
        (project / "big" / f"scratch-{i:05d}.tmp").write_text("")
    (project / "small").mkdir()
    for i in range(20):
        (project / "small" / f"f{i}.txt").write_text("hi\n")
    (project / "huge.txt").write_bytes(b"abcdefghij\n" * (300 * 1024))  # ~3.2 MB: cut at 1 MiB
    (project / "small.py").write_text("def f():\n    return 1\n" * 180)
    dirs = root / "many"
    for i in range(2000):
        (dirs / f"dir-{i:04d}").mkdir(parents=True)
    return project


async def timed(client: Any, message: dict[str, Any], runs: int) -> float:
    return (await median_request_ms(client, message, runs))[0]


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = make_folder(root)
        home = write_scripted_home(root / "home", [])
        daemon = await DaemonProcess.start(home)
        try:
            client = await daemon.unix()
            resp, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
            agent = resp["data"]["agent_id"]
            fs = {"agent_id": agent}
            results = {
                "list_5000_files_beside_5000_ignored_ms": await timed(
                    client, {"type": "fs.list", **fs, "path": "big"}, runs
                ),
                "list_20_files_ms": await timed(client, {"type": "fs.list", **fs, "path": "small"}, runs),
                "read_1mib_of_3mb_ms": await timed(
                    client, {"type": "fs.read", **fs, "path": "huge.txt"}, runs
                ),
                "read_4kb_ms": await timed(client, {"type": "fs.read", **fs, "path": "small.py"}, runs),
                "complete_in_2000_dirs_ms": await timed(
                    client, {"type": "fs.complete", "prefix": str(root / "many" / "dir-1")}, runs
                ),
            }
        finally:
            await daemon.kill()
    results["runs"] = runs
    report("fs_tree", results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))

"""How the daemon starts and ends its runtimes' processes (``shard.daemon.children``)."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

from shard.daemon.children import spawn


def _running(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() not in (entry / "cmdline").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


async def test_a_spawn_cancelled_while_it_starts_ends_its_process_and_returns() -> None:
    """A daemon that stops while a runtime is being spawned cancels that spawn — and, leaving
    ``asyncio.run``, every task of its loop at once. With asyncio's subprocess, the task connecting
    the new process's pipes was cancelled with it, and asyncio's own clean-up then waited forever for
    pipes that were never connected: the daemon hung in its shutdown. A cancelled spawn must return
    promptly, with its process ended."""
    marker = f"shard-spawn-{uuid.uuid4().hex}"
    argv = [sys.executable, "-c", "import sys, time; time.sleep(60)", marker]
    for delay in range(4):  # cancelled at each of its first steps, before and after the pipes connect
        task = asyncio.ensure_future(spawn(argv, dict(os.environ), None))
        for _ in range(delay):
            await asyncio.sleep(0)
        for other in asyncio.all_tasks():  # as asyncio.run's teardown does: all of them at once
            if other is not asyncio.current_task():
                other.cancel()
        done, _ = await asyncio.wait([task], timeout=20)
        assert task in done, f"a spawn cancelled after {delay} steps never returned"
        assert task.cancelled()
        for _ in range(200):
            if not _running(marker):
                break
            await asyncio.sleep(0.05)
        assert _running(marker) == [], f"a spawn cancelled after {delay} steps left its process running"

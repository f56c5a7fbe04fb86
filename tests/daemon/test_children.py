"""How the daemon starts and ends its runtimes' processes (``shard.daemon.children``)."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

from daemon_helpers import live_pids

from shard.daemon.children import spawn


async def test_a_spawn_cancelled_while_it_starts_ends_its_process_and_returns() -> None:
    """A daemon that stops while a runtime is being spawned cancels that spawn — and, leaving
    ``asyncio.run``, every task of its loop at once. With asyncio's subprocess, the task connecting
    the new process's pipes was cancelled with it, and asyncio's own clean-up then waited forever for
    pipes that were never connected: the daemon hung in its shutdown. A cancelled spawn must return
    promptly, with its process ended."""
    marker = f"shard-spawn-{uuid.uuid4().hex}"

    def running() -> list[int]:
        return live_pids(lambda argv: marker.encode() in argv)

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
            if not running():
                break
            await asyncio.sleep(0.05)
        assert running() == [], f"a spawn cancelled after {delay} steps left its process running"

"""Bounded buffers on a direct connection (issue 9, item 6b): ``shard agent --stdio`` stops reading
its input while its output is backed up (the daemon's outbound cap, 16 MiB), so a client that writes
commands and never reads cannot make it buffer without limit — and nothing is lost: once the client
reads, every command gets its one response, in order."""

from __future__ import annotations

import os
import select
import subprocess
import threading
from pathlib import Path
from typing import IO

import orjson

from shard.testing import shard_command

FLOOD = 200_000  # commands offered; the agent must stop taking them well before
BOUND = 100_000  # ...before this many: 100k unread commands used to cost ~40 MB
QUIET = 3.0  # seconds the input pipe stays full before the agent counts as no longer reading


def _line(n: int) -> bytes:
    return b'{"type":"list_modes","id":"%d"}\n' % n


def _collect(stdout: IO[bytes], ids: list[str]) -> None:
    for raw in stdout:
        message = orjson.loads(raw)
        if message.get("type") == "response":
            assert message["success"] is True, message
            ids.append(message["id"])


def test_an_unread_agent_stops_reading_and_loses_nothing(tmp_path: Path):
    """Commands written without reading the output are taken only up to a bound (the writes then
    block: the agent has stopped reading), well short of 100k commands; once the output is read,
    every accepted command has exactly one response, in order.

    Nothing here measures speed or memory: the only clock is how long the pipe must stay full to
    count as no longer read (a slow machine only makes the test stop writing sooner).
    """
    proc = subprocess.Popen(
        shard_command("agent", "--stdio", "--model", "scripted/demo"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env={**os.environ, "SHARD_HOME": str(tmp_path / "home")},
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        fd = proc.stdin.fileno()
        os.set_blocking(fd, False)
        written = 0  # commands wholly written
        pending = b""
        while written < FLOOD:
            if not pending:
                pending = b"".join(_line(n) for n in range(written, min(written + 1000, FLOOD)))
            try:
                taken = os.write(fd, pending)
            except BlockingIOError:
                if not select.select([], [fd], [], QUIET)[1]:
                    break  # the pipe stayed full: the agent stopped reading
                continue
            done, pending = pending[:taken], pending[taken:]
            written += done.count(b"\n")
        accepted = written
        assert accepted < BOUND, f"the agent took all {accepted} commands without anyone reading"

        ids: list[str] = []
        reader = threading.Thread(target=_collect, args=(proc.stdout, ids))
        reader.start()  # reading lets the agent resume; what is still to write can go in now
        os.set_blocking(fd, True)
        if pending:  # the command cut in the middle, so that every accepted line is whole
            os.write(fd, pending[: pending.index(b"\n") + 1])
            accepted += 1
        proc.stdin.close()  # end of input: the agent answers everything it took, then exits
        reader.join()
        assert proc.wait() == 0
        assert ids == [str(n) for n in range(accepted)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        if not proc.stdin.closed:
            proc.stdin.close()

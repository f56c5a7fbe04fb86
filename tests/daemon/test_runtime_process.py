"""What the daemon demands of a runtime child before it serves it: hello first, in this major
protocol version, then sync — checked against real child processes that break each rule."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from shard.daemon.runtime_proc import RuntimeProcess
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import Oversized

HELLO = {"type": "hello", "protocol_version": "0.1.0", "server_version": "x", "capabilities": []}
SYNC = {"type": "sync", "status": "idle", "mode": "build", "live_window": {"messages": []}}


def _child(*lines: dict) -> list[str]:
    """A process that writes these JSONL lines, then waits for stdin to close."""
    text = "".join(json.dumps(line) + "\n" for line in lines)
    script = f"import sys; sys.stdout.write({text!r}); sys.stdout.flush(); sys.stdin.read()"
    return [sys.executable, "-c", script]


async def _start(*lines: dict) -> RuntimeProcess:
    proc = RuntimeProcess(_child(*lines), dict(os.environ), lambda p, line: None, lambda p, c, e: None)
    await proc.start()
    return proc


async def test_a_runtime_in_this_protocol_version_starts():
    """Covers: R7.1, R9.1.1"""
    proc = await _start({**HELLO, "protocol_version": "0.4.2"}, SYNC)
    assert proc.alive
    assert proc.sync["type"] == "sync"
    await proc.stop()


@pytest.mark.parametrize("version", ["1.0.0", "2.3.4", "", None])
async def test_a_runtime_of_another_major_version_is_a_protocol_error(version):
    """A runtime whose hello names another major protocol version (or none) is refused with
    PROTOCOL_ERROR and killed.

    Covers: R8.11, R7.11
    """
    hello = {**HELLO, "protocol_version": version} if version is not None else {"type": "hello"}
    proc = RuntimeProcess(_child(hello, SYNC), dict(os.environ), lambda p, line: None, lambda p, c, e: None)
    with pytest.raises(ShardError) as caught:
        await proc.start()
    assert caught.value.code == ErrorCode.PROTOCOL_ERROR
    assert "protocol" in caught.value.message
    assert proc.proc is not None
    assert proc.proc.returncode == -9, "the child (which would wait for stdin forever) was killed"


@pytest.mark.parametrize(
    "lines",
    [
        (SYNC, HELLO),  # sync before hello
        ({"type": "status", "status": "idle"}, HELLO, SYNC),  # something before hello
        (HELLO, {"type": "status", "status": "idle"}, SYNC),  # something between hello and sync
    ],
)
async def test_messages_out_of_sequence_are_a_protocol_error(lines):
    """Covers: R8.12, R3.2"""
    with pytest.raises(ShardError) as caught:
        await _start(*lines)
    assert caught.value.code == ErrorCode.PROTOCOL_ERROR


async def test_an_error_in_place_of_sync_says_why_the_runtime_could_not_start():
    """A runtime that reports SESSION_CORRUPT before its sync is SESSION_CORRUPT; any other error
    is RUNTIME_START_FAILED carrying the runtime's message.

    Covers: R8.14, R8.15
    """
    corrupt = {"type": "error", "code": "SESSION_CORRUPT", "message": "line 3 is not JSON", "fatal": True}
    with pytest.raises(ShardError) as caught:
        await _start(HELLO, corrupt)
    assert caught.value.code == ErrorCode.SESSION_CORRUPT
    assert caught.value.message == "line 3 is not JSON"
    other = {"type": "error", "code": "CONFLICT", "message": "open in another shard process", "fatal": True}
    with pytest.raises(ShardError) as caught:
        await _start(HELLO, other)
    assert caught.value.code == ErrorCode.RUNTIME_START_FAILED
    assert "open in another shard process" in caught.value.message


async def test_an_over_long_line_is_one_oversized_record_and_reading_goes_on():
    """A child that writes a line over the cap (on stdout and on stderr) while it keeps running: the
    line reaches on_line as one Oversized record (its start kept, never the whole of it), the lines
    after it still arrive in order, and the child is served, stopped and reported as usual."""
    huge = "x" * 20_000  # over both caps: stdout 1 KB here, stderr 16 KB
    script = (
        "import sys, json\n"
        f"for m in ({HELLO!r}, {SYNC!r}): sys.stdout.write(json.dumps(m) + '\\n')\n"
        f'sys.stdout.write(\'{{"type":"status","detail":"{huge}"}}\\n\')\n'
        f"sys.stderr.write('{huge}\\n'); sys.stderr.flush()\n"
        "sys.stdout.write(json.dumps({'type': 'status', 'status': 'idle'}) + '\\n'); sys.stdout.flush()\n"
        "sys.stdin.read()\n"
    )
    lines: list = []
    exits: list = []
    arrived, exited = asyncio.Event(), asyncio.Event()

    def on_line(proc, record):
        lines.append(record)
        if len(lines) == 2:
            arrived.set()

    proc = RuntimeProcess(
        [sys.executable, "-c", script],
        dict(os.environ),
        on_line,
        lambda p, code, stderr: (exits.append((code, stderr)), exited.set()),
        max_line=1024,
    )
    await proc.start()
    await asyncio.wait_for(arrived.wait(), 30)
    oversized, after = lines
    assert isinstance(oversized, Oversized)
    assert oversized.size == len(huge) + len('{"type":"status","detail":""}')
    assert oversized.prefix.startswith(b'{"type":"status"')
    assert json.loads(after) == {"type": "status", "status": "idle"}
    assert proc.alive, "the child is still served"
    await proc.stop()
    assert proc.proc is not None
    assert proc.proc.returncode == 0
    await asyncio.wait_for(exited.wait(), 30)
    ((code, stderr),) = exits
    assert code == 0
    assert "20000 bytes" in stderr, "the long stderr line is kept as a note of its size"

"""What the daemon demands of a runtime child before it serves it: hello first, in this major
protocol version, then sync — checked against real child processes that break each rule."""

from __future__ import annotations

import json
import os
import sys

import pytest

from shard.daemon.runtime_proc import RuntimeProcess
from shard.protocol.errors import ErrorCode, ShardError

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

"""``shard attach`` refusing before it takes the screen: no daemon, a protocol major it does not
speak, an unknown agent — each one line on stderr and exit status 1 (the real command, in a
subprocess). The screen itself is tested in tests/tui."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import orjson
import pytest

from shard.testing import shard_command

pytestmark = pytest.mark.no_local_runtimes  # no test here starts a runtime


async def attach(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = shard_command("attach", *args, "--home", str(home))
    return await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True, timeout=30)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


async def test_no_daemon_is_one_line_and_exit_1(tmp_path: Path):
    line = one_line(await attach(tmp_path / "home"))
    assert line == f"shard attach: no daemon is running for {tmp_path / 'home'} (start one: shard daemon)"


async def test_another_protocol_major_is_refused(tmp_path: Path):
    """The server's hello says 9.0.0: the client disconnects and says why (no retry).

    Covers: R7.11, R3.2, R6.4.17
    """
    home = tmp_path / "home"
    home.mkdir()
    sock = tmp_path / "fake.sock"
    hello = {"type": "hello", "protocol_version": "9.0.0", "server_version": "x", "capabilities": []}

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(orjson.dumps(hello) + b"\n")
        await writer.drain()
        await reader.read()
        writer.close()

    server = await asyncio.start_unix_server(greet, str(sock))
    (home / "daemon.json").write_bytes(orjson.dumps({"pid": 1, "port": 1, "socket": str(sock)}))
    try:
        line = one_line(await attach(home))
    finally:
        server.close()
    assert line.startswith("shard attach: ")
    assert "9.0.0" in line


async def test_an_unknown_agent_is_one_line(daemon_factory):
    daemon = await daemon_factory([])
    line = one_line(await attach(daemon.home, "agent-0000000000000000"))
    assert line == "shard attach: no agent agent-0000000000000000 (shard attach lists them)"

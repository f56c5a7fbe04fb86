"""The command line a Claude Code or Codex user expects (issue 26 item 8): ``echo … | shard run``
reads the prompt from stdin, and ``shard`` alone in a terminal opens the terminal client on the
current folder's agent, starting a daemon for it when none runs and saying so in one line.

Every test runs the real command; ``shard`` alone gets a real pseudo-terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import signal
import socket
import struct
import subprocess
import termios
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import recorded_requests, shard_command, text_step, write_scripted_home
from shard.testing.daemon import UnixClient

pytestmark = pytest.mark.slow


def _run(home: Path, cwd: Path, args: list[str], stdin: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        shard_command(*args),
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home)},
        stdin=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


def _last_prompt(home: Path) -> Any:
    return recorded_requests(home)[-1]["messages"][-1]["content"]


@pytest.mark.parametrize("args", [["run"], ["run", "-"]], ids=["no-prompt", "dash"])
def test_a_prompt_comes_from_stdin(tmp_path: Path, project: Path, args: list[str]) -> None:
    """``echo … | shard run`` (and ``shard run -``): all of stdin is the prompt, without its last
    line break."""
    home = write_scripted_home(tmp_path / "home", [text_step("read it")], loop=True)
    done = subprocess.run(
        shard_command(*args),
        cwd=project,
        env={**os.environ, "SHARD_HOME": str(home)},
        input=b"first line\nsecond line\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"read it\n"), done.stderr
    assert "first line\nsecond line" in json.dumps(_last_prompt(home)).replace("\\n", "\n")
    assert "second line\n" not in json.dumps(_last_prompt(home)).replace("\\n", "\n")


def test_no_prompt_at_all_is_one_line(tmp_path: Path, project: Path) -> None:
    """An empty stdin, and no prompt with stdin a terminal: one line each, exit 2, nothing run."""
    home = write_scripted_home(tmp_path / "home", [text_step("x")])
    empty = _run(home, project, ["run"], subprocess.DEVNULL)
    assert (empty.returncode, empty.stderr) == (2, b"shard: the prompt read from stdin is empty\n")
    leader, follower = pty.openpty()
    try:
        tty = _run(home, project, ["run"], follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert tty.returncode == 2
    assert tty.stderr.decode().count("\n") == 1
    assert "shard run needs a prompt" in tty.stderr.decode()
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


def test_shard_alone_without_a_terminal_prints_the_usage(tmp_path: Path, project: Path) -> None:
    alone = _run(tmp_path / "home", project, [], subprocess.DEVNULL)
    assert alone.returncode == 2
    assert alone.stdout.startswith(b"usage: shard")
    assert not (tmp_path / "home" / "daemon.json").exists(), "no daemon is started for a script"


class _Terminal:
    """``shard`` on an 80x24 pseudo-terminal; what it writes is kept (and drained, so it never
    blocks on a full terminal)."""

    def __init__(self, proc: asyncio.subprocess.Process, leader: int) -> None:
        self.proc = proc
        self.leader = leader
        self.seen = bytearray()
        self.grew = asyncio.Event()
        asyncio.get_running_loop().add_reader(leader, self._read)

    @classmethod
    async def start(cls, home: Path, cwd: Path) -> _Terminal:
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {**os.environ, "SHARD_HOME": str(home), "TERM": "xterm-256color"}
        proc = await asyncio.create_subprocess_exec(
            *shard_command(), stdin=follower, stdout=follower, stderr=follower, cwd=cwd, env=env
        )
        os.close(follower)
        return cls(proc, leader)

    def _read(self) -> None:
        try:
            chunk = os.read(self.leader, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            asyncio.get_running_loop().remove_reader(self.leader)
        self.seen += chunk
        self.grew.set()

    async def until(self, pattern: bytes) -> re.Match[bytes]:
        async with asyncio.timeout(60):
            while (found := re.search(pattern, self.seen)) is None:
                self.grew.clear()
                await self.grew.wait()
        return found

    async def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        await self.proc.wait()
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self.leader)
            os.close(self.leader)


@pytest.fixture
async def terminals() -> AsyncIterator[list[_Terminal]]:
    opened: list[_Terminal] = []
    yield opened
    for terminal in opened:
        await terminal.close()


async def _agents_here(home: Path, cwd: Path) -> list[dict[str, Any]]:
    client = await UnixClient.connect(Path(json.loads((home / "daemon.json").read_text())["socket"]))
    try:
        listed, _ = await client.request({"type": "agent.list", "id": "l"})
    finally:
        await client.close()
    return [a for a in listed["data"]["agents"] if a["cwd"] == str(cwd)]


async def test_shard_alone_in_a_terminal_starts_a_daemon_and_opens_the_folders_agent(
    tmp_path: Path, project: Path, terminals: list[_Terminal]
) -> None:
    """No daemon: ``shard`` starts one from this shell, says so in one line (how, its log, how to
    stop it), and the terminal client opens a new agent on this folder. A second ``shard`` finds
    the daemon (and says nothing of it) and opens the same agent. The usual port is taken (by this
    test, or by anyone): the daemon takes another rather than failing."""
    home = write_scripted_home(tmp_path / "home", [text_step("x")], loop=True)
    taken = socket.socket()
    with contextlib.suppress(OSError):
        taken.bind(("127.0.0.1", 7433))
        taken.listen()
    first = await _Terminal.start(home, project)
    terminals.append(first)
    notice = await first.until(
        rb"shard: started a daemon for (\S+) in the background \(shard daemon --port 0, pid (\d+)\); "
        rb"its log: (\S+); stop it with: kill (\d+)\r?\n"
    )
    daemon_pid = int(notice.group(2))
    try:
        assert notice.group(1).decode() == str(home)
        assert notice.group(3).decode() == str(home / "daemon.log")
        assert notice.group(4) == notice.group(2)
        assert (home / "daemon.log").stat().st_mode & 0o077 == 0, "the enrollment link is the owner's"
        async with asyncio.timeout(60):
            while not (here := await _agents_here(home, project.resolve())):
                await first.grew.wait()
                first.grew.clear()
        (agent,) = here
        await first.until(agent["agent_id"].encode())  # the client shows it
        second = await _Terminal.start(home, project)
        terminals.append(second)
        await second.until(agent["agent_id"].encode())
        assert b"started a daemon" not in second.seen
        assert len(await _agents_here(home, project.resolve())) == 1
    finally:
        taken.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon_pid, signal.SIGKILL)

"""``shard attach`` for real, in a terminal: tmux runs it against a real daemon, the test types with
``send-keys`` and reads the screen with ``capture-pane``. ``pipe-pane`` copies what the program
writes into a FIFO: each write is the event on which the screen is read again (within a deadline;
a quiet pane is re-read every 0.5 s, as the copy may arrive before tmux has drawn it)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from shard.testing import UnixClient, shard_command
from shard.testing.home import text_step, tool_step

TMUX = shutil.which("tmux") or "tmux"  # ./test and .ci/run install it where missing


class Pane:
    def __init__(self, socket: str, session: str, fifo: Path) -> None:
        self.base = [TMUX, "-L", socket]
        self.target = session
        self.fifo = fifo
        self.reader: asyncio.subprocess.Process | None = None

    async def start(self, shell: str, size: tuple[int, int] = (110, 30)) -> None:
        """Run ``shell`` in a new session of ``size`` whose output also goes to the FIFO."""
        os.mkfifo(self.fifo)
        self.reader = await asyncio.create_subprocess_exec("cat", str(self.fifo), stdout=subprocess.PIPE)
        width, height = (str(n) for n in size)
        self.run("new-session", "-d", "-s", self.target, "-x", width, "-y", height, shell)
        self.run("pipe-pane", "-t", self.target, f"cat > {shlex.quote(str(self.fifo))}")

    def run(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, check=True, timeout=10)
        return done.stdout

    def stop(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, check=False, timeout=10)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.target, *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.target)

    async def shows(self, text: str, limit: float = 60.0) -> str:
        assert self.reader is not None
        assert self.reader.stdout is not None
        async with asyncio.timeout(limit):
            while text not in (screen := self.screen()):
                # the program wrote: read the screen again (the copy can reach the FIFO before tmux
                # has drawn it, so a quiet pane is read again after a short while too)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.reader.stdout.read(1 << 16), 0.5)
        return screen


@pytest.fixture
async def pane(tmp_path: Path):
    socket = f"shard-test-{os.getpid()}-{tmp_path.name}"
    made = Pane(socket, "attach", tmp_path / "pane.fifo")
    yield made
    made.stop()
    if made.reader is not None:  # the pipe closed with the server: cat ends
        await asyncio.wait_for(made.reader.wait(), 10)


@pytest.mark.slow
async def test_shard_attach_in_tmux(daemon_factory, project: Path, pane: Pane):
    """Open an agent by id, prompt with Enter, read the answer on the screen, quit with ctrl+c: the
    command exits 0 and leaves no traceback on the terminal.

    Covers: R9.2.3, R6.4.4, R3.3
    """
    daemon = await daemon_factory([text_step("Hello from inside tmux.", chunk=5)])
    client = await daemon.unix()
    agent_id, shell = await _attach_shell(client, daemon.home, project)
    await pane.start(shell)
    await pane.shows(f"{agent_id} · idle")
    await pane.shows("^t Terminate")  # the footer, drawn last (at 110 columns)
    pane.keys("what is up?", "Enter")
    screen = await pane.shows("Hello from inside tmux.")
    assert "you what is up?" in screen
    await pane.shows("turn done")
    pane.keys("C-c")
    screen = await pane.shows("exit status")
    assert "exit status 0" in screen
    assert "Traceback" not in screen
    await client.close()


@pytest.mark.slow
async def test_a_permission_dialog_at_80x24_in_tmux(daemon_factory, project: Path, pane: Pane):
    """At 80x24, a bash request with a command longer than the screen is wide: the captured pane
    shows every choice, Deny included, and n denies.

    Covers: R6.3.6, R9.5.5
    """
    command = "grep -rn --include=*.py -e TODO -e FIXME " + " ".join(f"src/part{n}" for n in range(12))
    steps = [tool_step("bash", {"command": command}), text_step("Fine, I will leave it.")]
    daemon = await daemon_factory(steps)
    client = await daemon.unix()
    agent_id, shell = await _attach_shell(client, daemon.home, project)
    await pane.start(shell, size=(80, 24))
    await pane.shows(f"{agent_id} · idle")
    pane.keys("look around", "Enter")
    screen = await pane.shows("Allow once")
    screen = await pane.shows("Esc: decide later")  # the dialog's last line: all of it is drawn
    assert "Deny" in screen
    assert "Always allow this exact call" in screen
    assert "src/part11" in screen  # the whole command
    pane.keys("n")
    screen = await pane.shows("Fine, I will leave it.")
    assert "Deny" not in screen
    pane.keys("C-c")
    assert "exit status 0" in await pane.shows("exit status")
    await client.close()


async def _attach_shell(client: UnixClient, home: Path, project: Path) -> tuple[str, str]:
    """A new agent on ``project``, and the shell line that runs ``shard attach`` on it."""
    created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    agent_id = created["data"]["agent_id"]
    command = shlex.join([*shard_command("attach", agent_id, "--home", str(home))])
    # COLUMNS / LINES (pytest's own terminal may set them) would override the pane's size
    where = shlex.quote(str(project))
    return agent_id, f'cd {where} && unset COLUMNS LINES && {command}; echo "exit status $?"; sleep 60'

"""The test kit's forked runtimes (``shard.testing.forked``): forked by a template of this process's
own, as the daemon forks its runtimes — and spawned cold whenever a fork would differ from a cold
start."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from shard.testing import AgentProcess, write_scripted_home
from shard.testing.home import text_step


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_a_runtime_is_forked_by_the_template_and_serves_and_exits_as_a_spawned_one(
    tmp_path: Path, project: Path
):
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hello there")])
    agent = await AgentProcess.start(home, project)
    try:
        assert _ppid(agent.proc.pid) not in (os.getpid(), 1)  # the template's child, not ours
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "hi"})
        events = await agent.until(lambda m: m.get("type") == "turn_end")
        assert (
            "".join(m.get("text_delta", "") for m in events if m["type"] == "message_delta") == "hello there"
        )
        assert await agent.finish() == 0
        assert agent.proc.returncode == 0
    finally:
        await agent.kill()


async def test_a_forked_runtimes_signal_is_its_exit_code_and_its_stderr_is_read(
    tmp_path: Path, project: Path
):
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    agent = await AgentProcess.start(home, project)
    await agent.handshake()
    agent.proc.send_signal(signal.SIGKILL)
    assert await agent.proc.wait() == -signal.SIGKILL
    assert agent.proc.returncode == -signal.SIGKILL
    assert await agent.stderr_text() == ""


async def test_an_umask_or_a_python_variable_is_a_cold_start(tmp_path: Path, project: Path):
    """What an interpreter reads at its start, a fork does not get: those starts are spawned."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    for options in ({"umask": 0o077}, {"env": {"PYTHONPATH": str(tmp_path)}}, {"cold": True}):
        agent = await AgentProcess.start(home, project, **options)  # type: ignore[arg-type]
        try:
            await agent.handshake()
            assert _ppid(agent.proc.pid) == os.getpid(), options
        finally:
            await agent.kill()

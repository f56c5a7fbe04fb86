"""The warm template is started before the daemon's own imports (issue 31) and is the one the pool
serves from: the first runtime is forked by it, and no second template is built."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from daemon_helpers import attach, create_agent, runtime_pids
from test_warm_pool import _ppid, templates_of

from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.home import text_step

pytestmark = pytest.mark.slow


def _marks(lines: list[str], pid: int) -> list[str]:
    """The labels of ``pid``'s ``shard-trace`` lines, in order."""
    found = (re.match(rf"shard-trace {pid} (.+) \+[\d.]+ cpu [\d.]+$", line) for line in lines)
    return [m.group(1) for m in found if m]


async def test_the_template_starts_before_the_daemons_imports_and_serves_the_first_runtime(
    home: Path, project: Path
):
    """With SHARD_TRACE, the daemon says it started the template before its own imports and before
    it listened; the first agent's runtime is a child of the daemon's one template, which is that
    early one (adopted: there is no other), and answers its prompt."""
    write_scripted_home(home, [text_step("hello there")])
    daemon = await DaemonProcess.start(home, env={"SHARD_TRACE": repr(time.time())})
    try:
        marks = _marks(daemon.startup, daemon.proc.pid)
        assert marks[: marks.index("daemon: listening") + 1] == [
            "main",
            "daemon: template",
            "daemon: imports",
            "daemon: listening",
        ]
        (template,) = templates_of(daemon)
        client = await daemon.unix()
        agent = await create_agent(client, project)
        await attach(client, agent)
        await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "hi"})
        events = await client.until(lambda m: m.get("type") == "turn_end" and m.get("agent_id") == agent)
        text = "".join(m.get("text_delta", "") for m in events if m.get("type") == "message_delta")
        assert text == "hello there"
        (pid,) = runtime_pids(home)
        assert _ppid(pid) == template
        assert templates_of(daemon) == [template]
    finally:
        await daemon.kill()


async def test_a_cold_start_daemon_starts_no_template(home: Path, project: Path):
    """``--cold-start``: no template is started, early or late; the runtime is the daemon's child."""
    write_scripted_home(home, [text_step("hello there")])
    daemon = await DaemonProcess.start(home, "--cold-start", env={"SHARD_TRACE": repr(time.time())})
    try:
        assert "daemon: template" not in _marks(daemon.startup, daemon.proc.pid)
        client = await daemon.unix()
        agent = await create_agent(client, project)
        await attach(client, agent)
        (pid,) = runtime_pids(home)
        assert _ppid(pid) == daemon.proc.pid
        assert templates_of(daemon) == []
    finally:
        await daemon.kill()

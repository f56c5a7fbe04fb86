"""What a daemon's runtimes print into the daemon's terminal: a runtime's stderr reaches the daemon's
output (``[runtime PID] …``), so ordinary work must print nothing there (issue 26 item 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.testing import DaemonProcess, text_step, write_scripted_home

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("agents_md", [True, False], ids=["agents-md", "none"])
async def test_an_agent_prints_nothing_into_the_daemons_output(
    home: Path, project: Path, agents_md: bool
) -> None:
    """A project with AGENTS.md: the agent's ``sync`` at attach (the runtime's own) names the file (a
    model of the wire, not a bare dict — a bare one made Pydantic print a serializer warning from
    every runtime); without one it names none. Its turn runs, and once the daemon has stopped (every
    runtime's stderr drained) its output holds no line from a runtime."""
    if agents_md:
        (project / "AGENTS.md").write_text("Answer briefly.\n")
    write_scripted_home(home, [text_step("ok")], loop=True)
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
        agent_id = created["data"]["agent_id"]
        attached, read = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        assert attached["success"], attached
        syncs = [m for m in read if m.get("type") == "sync"] or await client.until_type("sync")
        if agents_md:
            (loaded,) = syncs[-1]["instructions"]
            assert loaded["path"] == str(project / "AGENTS.md")
            assert (loaded["bytes"], loaded["truncated"]) == (16, False)
        else:
            assert "instructions" not in syncs[-1]
        await client.request({"type": "prompt", "id": "p", "agent_id": agent_id, "message": "hi"})
        await client.idle(agent_id=agent_id)
    finally:
        await daemon.stop()
    from_runtimes = [line for line in daemon.output if line.startswith("[runtime ")]
    assert from_runtimes == []

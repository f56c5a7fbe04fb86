"""Full disks and I/O errors reach the client, and lose nothing already written.

SHARD_HOME sits on a real 2 MiB tmpfs that the test fills (``shard.testing.disk``; CI runs as root).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shard.testing import AgentProcess, DaemonProcess, text_step, tool_step, write_scripted_home
from shard.testing.disk import SmallDisk, small_disk

SLEEP = "shard.testing.tools:SleepTool"
BIG = "A long answer that takes more than a page of the session file. " * 300  # ~19 KB per entry


@pytest.fixture
def disk(tmp_path: Path):
    with small_disk(tmp_path / "disk") as mounted:
        yield mounted


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def test_agent_create_on_a_full_disk_is_answered_and_the_daemon_serves_on(disk: SmallDisk, project):
    """The registry cannot be written: ``agent.create`` is answered INTERNAL_ERROR naming the cause,
    the connection stays, nothing half-created is listed, and once space is back a create works.

    Covers: R10.1.1
    """
    home = write_scripted_home(disk.root / "home", [text_step("hi")])
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        disk.fill()
        failed, _ = await client.request({"type": "agent.create", "id": "c1", "cwd": str(project)})
        assert failed["success"] is False
        assert failed["error"]["code"] == "INTERNAL_ERROR"
        assert "full" in failed["error"]["message"]
        listed, _ = await client.request({"type": "agent.list", "id": "l1"})
        assert listed["data"]["agents"] == []
        disk.free()
        created, _ = await client.request({"type": "agent.create", "id": "c2", "cwd": str(project)})
        assert created["success"] is True, created
        listed, _ = await client.request({"type": "agent.list", "id": "l2"})
        assert [a["agent_id"] for a in listed["data"]["agents"]] == [created["data"]["agent_id"]]
        assert not any("Traceback" in line for line in daemon.output)
    finally:
        await daemon.kill()


async def test_restore_on_a_full_disk_says_hello_and_a_fatal_error(disk: SmallDisk, project):
    """A session with a torn last line needs a write to be restored; on a full disk the restore
    answers ``hello`` then a fatal INTERNAL_ERROR and exits 3 — no traceback — and the session file
    is exactly as it was.

    Covers: R9.1.2, R9.4.18
    """
    home = write_scripted_home(disk.root / "home", [text_step("first answer")])
    agent = await AgentProcess.start(home, project)
    _, sync = await agent.handshake()
    await agent.send({"type": "prompt", "message": "hello"})
    await agent.idle()
    assert await agent.finish() == 0
    session = next((home / "sessions").glob("*/session.jsonl"))
    with session.open("ab") as f:
        f.write(b'{"id":"msg-torn","kind":"mess')  # a write cut short by a crash
    before = session.read_bytes()
    disk.fill()
    restored = await AgentProcess.start(home, project, "--session", sync["session_id"])
    try:
        hello = await restored.next()
        assert hello["type"] == "hello"
        error = await restored.next()
        assert error["type"] == "error"
        assert error["code"] == "INTERNAL_ERROR"
        assert error["fatal"] is True
        assert "No space left" in error["message"]
        assert await restored.finish() == 3
        assert "Traceback" not in await restored.stderr_text()
        assert session.read_bytes() == before
    finally:
        await restored.kill()


async def test_a_full_disk_mid_turn_is_fatal_and_nothing_fails_unseen(disk: SmallDisk, project):
    """The session cannot take the turn's next entry: a fatal INTERNAL_ERROR event, status error,
    later prompts refused with the reason, end of input exits 3 — and no background work (the idle
    compaction the turn would have started) fails in a traceback.

    Covers: R9.4.18, R9.1.20
    """
    models = [{"id": "m", "context_window": 2000}]  # the first answer passes the compaction threshold
    gate = project / "disk-is-full"  # the tool's result is written only once the disk is full
    steps = [tool_step("sleep", {"seconds": 60, "until": str(gate)}, text=BIG), text_step(BIG)]
    home = write_scripted_home(disk.root / "home", steps, models=models, extensions=[SLEEP])
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "fill it"})
        await agent.until_type("tool_call")  # the answer is recorded; the tool's result will not be
        disk.fill()
        gate.touch()
        read: list[dict[str, Any]] = await agent.until(lambda m: m["type"] == "error" and m.get("fatal"))
        assert read[-1]["code"] == "INTERNAL_ERROR"
        read = await agent.until(lambda m: m["type"] == "status" and m["status"] == "error")
        refused, _ = await agent.request({"type": "prompt", "id": "again", "message": "more"})
        assert refused["success"] is False
        assert "cannot continue" in refused["error"]["message"]
        assert await agent.finish() == 3
        stderr = await agent.stderr_text()
        assert "Traceback" not in stderr
        assert "IllegalTransition" not in stderr
    finally:
        await agent.kill()

"""``shard daemon``'s subagent settings reach its coordinator: ``--run-timeout`` / ``[subagents]
run_timeout`` puts a deadline on each run, ``[subagents] max_tasks`` bounds a launch (the real
daemon, spawned)."""

from __future__ import annotations

from pathlib import Path

from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.home import text_step, tool_step

SLEEP = ["shard.testing.tools:SleepTool"]


async def _parent(daemon: DaemonProcess, project: Path):
    client = await daemon.unix()
    created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    assert created["success"] is True, created
    return client, created["data"]["agent_id"]


async def test_a_run_past_the_run_timeout_is_timed_out(tmp_path: Path) -> None:
    """A child still sleeping when --run-timeout passes: its run ends timed_out, and a wait says so.

    Covers: R11.2.4, R11.2.6
    """
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    write_scripted_home(home, [tool_step("sleep", {"seconds": 60}), text_step("late")], extensions=SLEEP)
    daemon = await DaemonProcess.start(home, "--run-timeout", "1")
    try:
        client, parent_id = await _parent(daemon, project)
        launch = {
            "type": "subagent.create",
            "id": "l",
            "parent_agent_id": parent_id,
            "name": "slow",
            "task": "t",
        }
        created, _ = await client.request(launch)
        assert created["success"] is True, created
        wait = {
            "type": "subagent.wait",
            "id": "w",
            "parent_agent_id": parent_id,
            "handles": ["slow"],
            "timeout": 30,
        }
        waited, _ = await client.request(wait)
    finally:
        await daemon.stop()
    run = waited["data"]["runs"][0]
    assert waited["data"]["timed_out"] is False
    assert run["state"] == "timed_out"
    assert "deadline" in run


async def test_subagents_max_tasks_from_config_bounds_a_launch(tmp_path: Path) -> None:
    """Covers: R10.3.17"""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    write_scripted_home(home, [text_step("ok")], extra_toml="[subagents]\nmax_tasks = 2\n")
    daemon = await DaemonProcess.start(home)
    try:
        client, parent_id = await _parent(daemon, project)
        tasks = [{"name": f"t{i}", "task": "x"} for i in range(3)]
        launch = {"type": "subagent.create", "id": "l", "parent_agent_id": parent_id, "tasks": tasks}
        refused, _ = await client.request({**launch, "strategy": "parallel"})
        listed, _ = await client.request({"type": "agent.list", "id": "a"})
    finally:
        await daemon.stop()
    assert refused["success"] is False
    assert refused["error"]["code"] == "INVALID_REQUEST"
    assert "maxTasks (2)" in refused["error"]["message"]
    assert len(listed["data"]["agents"]) == 1  # nothing was created

"""The subagent tools (issue 14; PROTOCOL §10.3, §12.5): a scripted parent hosted by a real
``shard daemon`` launches and waits on children that another scripted model plays; the tools exist
only in a daemon-hosted runtime; the launch tool lists the agent definitions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.agent.daemon_link import SOCKET_VARIABLE
from shard.agent.tools.base import ToolContext, ToolFailure
from shard.agent.tools.subagents import LaunchTool, hosted_tools
from shard.testing import (
    AgentProcess,
    DaemonProcess,
    UnixClient,
    recorded_requests,
    text_step,
    tool_step,
    write_scripted_home,
)

NAMES = [
    "subagent_launch",
    "subagent_wait",
    "subagent_steer",
    "subagent_status",
    "subagent_stop",
    "subagent_relaunch",
]
KID = """
[[providers]]
name = "kid"
kind = "scripted"
script = "kid.json"
models = [{ id = "k", context_window = 100000 }]
"""


def _home(home: Path, parent: list[dict[str, Any]], kid: list[dict[str, Any]], loop: bool = False) -> Path:
    write_scripted_home(home, parent, extra_toml=KID)
    (home / "kid.json").write_bytes(orjson.dumps({"steps": kid, "loop": loop}))
    return home


@pytest.fixture
async def daemons() -> AsyncIterator[list[DaemonProcess]]:
    started: list[DaemonProcess] = []
    yield started
    for daemon in started:
        await daemon.kill()


async def _parent(daemon: DaemonProcess, cwd: Path) -> tuple[UnixClient, str]:
    """A client attached to a new agent (the parent) of ``daemon``."""
    client = await daemon.unix()
    created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(cwd)})
    parent = created["data"]["agent_id"]
    attached, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": parent})
    assert attached["success"], attached
    return client, parent


def _results(read: list[dict[str, Any]], agent_id: str) -> list[tuple[bool, str]]:
    """(is_error, text) of each tool_result of ``agent_id``."""
    out = []
    for m in read:
        if m.get("type") == "tool_result" and m.get("agent_id") == agent_id:
            content = m["content"]
            out.append((m["is_error"], content.get("text") or content.get("message")))
    return out


async def test_a_hosted_parent_launches_and_waits_on_children_through_a_real_daemon(
    daemons: list[DaemonProcess], tmp_path: Path
):
    """The parent's script calls subagent_launch (two children in parallel, on the children's own
    scripted model), then subagent_wait on their aliases: the results name the job, each alias, run
    and state, and the children's final texts; a wait on an unknown handle is one error line with the
    daemon's code; status lists the job; a steer to nobody is refused in one line; relaunch queues.

    Covers: R10.3.12, R10.3.20, R10.3.21, R10.3.23, R10.3.30, R10.3.40, R10.3.46, R10.3.50, R12.5.1, R12.5.5
    """
    launch = {
        "tasks": [{"name": "scout", "task": "look around"}, {"name": "critic", "task": "find faults"}],
        "strategy": "parallel",
        "model": "kid/k",
    }
    parent_steps = [
        tool_step("subagent_launch", launch),
        tool_step("subagent_wait", {"handles": ["scout", "critic"]}),
        tool_step("subagent_wait", {"handles": ["nobody"], "timeout": 0}),
        tool_step("subagent_status", {}),
        tool_step("subagent_steer", {"target": "nobody", "message": "hurry"}),
        tool_step("subagent_relaunch", {"target": "scout", "task": "look again"}),
        text_step("all done"),
    ]
    home = _home(tmp_path / "home", parent_steps, [text_step("child finished:\nno problems")], loop=True)
    cwd = tmp_path / "project"
    cwd.mkdir()
    daemons.append(daemon := await DaemonProcess.start(home))
    client, parent = await _parent(daemon, cwd)
    await client.send({"type": "prompt", "agent_id": parent, "message": "delegate"})
    read = await client.idle(agent_id=parent)
    results = _results(read, parent)
    assert len(results) == 6, results
    (err0, launched), (err1, waited), (err2, unknown), (err3, status), (err4, steer), (err5, again) = results
    assert (err0, err1, err2, err3, err4, err5) == (False, False, True, False, True, False)
    # until the daemon's strict steer lands it refuses the command; then the target is unknown
    assert steer.split(": ")[0:2] in (
        ["subagent_steer failed", "INVALID_REQUEST"],
        ["subagent_steer failed", "NOT_FOUND"],
    )
    assert again.startswith("Relaunched scout (run-")
    assert " as job job-" in again
    assert again.endswith("queued. It keeps its conversation; its completion report reaches you by itself.")
    assert launched.startswith("Launched job job-")
    assert "(parallel, 2 runs):" in launched
    assert "\n- scout (run-" in launched
    assert "\n- critic (run-" in launched
    assert "): queued" in launched
    lines = waited.splitlines()
    assert lines[0] == "State: completed"
    assert [line.split(" (")[0] for line in lines if line.startswith("- ")] == ["- scout", "- critic"]
    assert all(line.endswith("): completed") for line in lines if line.startswith("- "))
    assert waited.count("  final text:\n    child finished:\n    no problems") == 2
    assert unknown.startswith("subagent_wait failed: NOT_FOUND: ")
    assert "\n" not in unknown
    assert status.startswith("1 job (newest first):\n- job-")
    assert "(parallel): completed" in status
    first = recorded_requests(home)[0]
    assert [t for t in first["tools"] if t.startswith("subagent_")] == NAMES
    assert "{" not in waited, "text, not a JSON dump"


async def test_an_aborted_wait_lets_the_parent_stop_and_the_children_go_on(
    daemons: list[DaemonProcess], tmp_path: Path
):
    """Abort while subagent_wait blocks on a child that never finishes: the tool call is cancelled
    (its connection closes), the parent goes idle, and the child's run is still active.

    Covers: R10.3.29
    """
    parent_steps = [
        tool_step("subagent_launch", {"name": "sleeper", "task": "take your time", "model": "kid/k"}),
        tool_step("subagent_wait", {"handles": ["sleeper"]}),
    ]
    home = _home(
        tmp_path / "home", parent_steps, [{"blocks": [{"type": "text", "text": "hm"}], "stall": True}]
    )
    cwd = tmp_path / "project"
    cwd.mkdir()
    daemons.append(daemon := await DaemonProcess.start(home))
    client, parent = await _parent(daemon, cwd)
    await client.send({"type": "prompt", "agent_id": parent, "message": "delegate"})
    await client.until(lambda m: m.get("type") == "tool_call" and m.get("name") == "subagent_wait")
    await client.until(lambda m: m.get("type") == "subagent_run_changed" and m.get("state") == "active")
    await client.send({"type": "abort", "agent_id": parent})
    read = await client.idle(agent_id=parent)
    assert _results(read, parent)[-1] == (
        True,
        "Aborted by the user while this tool call ran: it may have done part of its work.",
    )
    status, _ = await client.request(
        {"type": "subagent.status", "id": "s", "parent_agent_id": parent, "targets": ["sleeper"]}
    )
    assert status["data"]["agents"][0]["run"]["state"] == "active"


def test_the_tools_exist_only_with_both_the_agent_id_and_the_daemon_socket(tmp_path: Path):
    home = tmp_path / "home"
    both = hosted_tools("agent-1", tmp_path, home, {SOCKET_VARIABLE: str(tmp_path / "daemon.sock")})
    assert [t.name for t in both] == NAMES
    assert hosted_tools(None, tmp_path, home, {SOCKET_VARIABLE: str(tmp_path / "daemon.sock")}) == []
    assert hosted_tools("agent-1", tmp_path, home, {}) == []


@pytest.mark.parametrize("flags", [["--agent-id", "agent-x"], []])
async def test_a_runtime_outside_a_daemon_offers_no_subagent_tools(tmp_path: Path, flags: list[str]):
    """``shard agent --stdio`` with only one of the two (the id, or the socket variable) has none.

    Covers: R12.5.1
    """
    home = write_scripted_home(tmp_path / "home", [text_step("hi")])
    env = {} if flags else {SOCKET_VARIABLE: str(tmp_path / "daemon.sock")}
    agent = await AgentProcess.start(home, tmp_path, *flags, env=env)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        await agent.idle()
    finally:
        await agent.kill()
    tools = recorded_requests(home)[0]["tools"]
    assert tools
    assert not [t for t in tools if t.startswith("subagent_")]


def test_the_launch_tool_lists_the_agent_definitions(tmp_path: Path):
    agents = tmp_path / ".shard" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\ndescription: Reviews diffs for bugs\n---\nReview.\n")
    (agents / "broken.md").write_text("no front matter\n")
    tools = hosted_tools("agent-1", tmp_path, tmp_path / "home", {SOCKET_VARIABLE: "/nowhere"})
    launch = next(t for t in tools if isinstance(t, LaunchTool))
    assert launch.spec().description.endswith(
        "Agent definitions (give one as a child's name to make it that agent):\n"
        "- reviewer: Reviews diffs for bugs"
    )
    bare = next(t for t in hosted_tools("agent-1", tmp_path / "home", tmp_path, {SOCKET_VARIABLE: "/x"}))
    assert "No agent definitions exist here" in bare.spec().description


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"name": "a"}, "subagent_launch: "),
        ({"name": "a", "task": "t", "strategy": "chain"}, "subagent_launch: strategy goes with tasks"),
        ({"tasks": [{"name": "a", "task": "t"}], "name": "b", "task": "u"}, "subagent_launch: "),
    ],
)
async def test_a_launch_the_daemon_would_refuse_is_refused_before_it_is_sent(
    tmp_path: Path, args: dict[str, Any], problem: str
):
    """Checked against the command's own model first: one line, and no connection is tried (the
    socket here does not exist, so a try would fail differently)."""
    tools = hosted_tools("agent-1", tmp_path, tmp_path, {SOCKET_VARIABLE: str(tmp_path / "none.sock")})
    launch = next(t for t in tools if isinstance(t, LaunchTool))
    with pytest.raises(ToolFailure) as refused:
        await launch.execute(launch.parse(args), ToolContext(cwd=tmp_path))
    assert str(refused.value).startswith(problem)
    assert "not reachable" not in str(refused.value)
    assert "\n" not in str(refused.value)


def test_each_tool_names_the_command_it_sends(tmp_path: Path):
    """The commands are imported at a tool's first call (not with the tools): each name must still
    be the daemon command its tool means, named as the tool is (``subagent_launch`` →
    ``subagent.create``, the rest by their own word)."""
    from shard.protocol import daemon_commands

    sent = {}
    env = {SOCKET_VARIABLE: str(tmp_path / "daemon.sock")}
    for tool in hosted_tools("agent-x", tmp_path, tmp_path / "home", env):
        command = getattr(daemon_commands, tool.command)
        assert issubclass(command, daemon_commands.SubagentCommand), tool.name
        sent[tool.name] = command.model_fields["type"].default
    assert sent == {
        "subagent_launch": "subagent.create",
        **{name: f"subagent.{name.removeprefix('subagent_')}" for name in NAMES[1:]},
    }

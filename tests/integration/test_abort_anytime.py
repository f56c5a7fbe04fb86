"""Abort at any instant leaves a usable agent (issue: an abort right after a prompt wedged it).

One real ``shard agent --stdio`` takes a prompt, then an ``abort`` after a delay drawn from a spread
of instants between 0 and 1.5 s: before the turn's first step, while the model streams, while a tool
runs, while a permission request waits, while a UI request waits. Every time, the abort is answered,
the agent ends idle, and the next prompt is accepted; at the end, closing stdin ends the process.
The same for ``session_op compact`` aborted at any instant of a compaction.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from shard.testing import AgentProcess, DaemonProcess, tool_step, write_scripted_home

LANES = 2  # agents aborted side by side in the turn test
TOOLS = ["shard.testing.tools:SleepTool", "shard.testing.tools:TouchTool", "shard.testing.tools:AskTool"]


def _busy_step(ask_first: bool) -> dict[str, Any]:
    """Streams for ~0.3 s, runs a tool for 0.2 s, then waits on a permission and a UI request."""
    step = tool_step("sleep", {"seconds": 0.2}, text="Working on it, one small piece at a time. " * 2)
    waits = [
        {"type": "tool_call", "name": "touch", "args": {"path": "made.txt"}},
        {"type": "tool_call", "name": "ask", "args": {"kind": "confirm", "title": "Go on?"}},
    ]
    step["blocks"] += waits[::-1] if ask_first else waits
    step.update(chunk=6, delay_ms=20)
    return step


def _instants(n: int, top: float, seed: int) -> list[float]:
    spread = [top * i / (n - 1) for i in range(n)]
    random.Random(seed).shuffle(spread)
    return spread


def _response_to(command_id: str) -> Any:
    return lambda m: m["type"] == "response" and m.get("id") == command_id


async def _settle(agent: AgentProcess, command_id: str) -> list[dict[str, Any]]:
    response, before = await agent.request({"type": "abort", "id": command_id})
    assert response["success"] is True, response
    return before


async def test_abort_at_any_instant_of_a_turn_leaves_the_agent_usable(tmp_path):
    """32 prompts, each aborted at a different instant from 0 to 1.5 s: each abort is answered, the
    last status each time is idle (or the turn never began), the next prompt is always accepted, and
    end of input ends the process cleanly. The instants are shared out between two agents that run
    side by side (each in its own home and project): every instant is still tried, and the waits
    overlap.

    Covers: R9.2.7, R9.1.20
    """
    instants = list(enumerate(_instants(32, 1.5, seed=7)))
    async with asyncio.TaskGroup() as lanes:
        for lane in range(LANES):
            lanes.create_task(_abort_turns(tmp_path / f"lane-{lane}", instants[lane::LANES]))


async def _abort_turns(root: Path, instants: list[tuple[int, float]]) -> None:
    """One agent: a prompt aborted at each of ``instants`` ((index, delay)), then end of input."""
    home = write_scripted_home(
        root / "home", [_busy_step(False), _busy_step(True)], loop=True, extensions=TOOLS, record=False
    )
    project = root / "project"
    project.mkdir()
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        for i, delay in instants:
            response, _ = await agent.request({"type": "prompt", "id": f"p{i}", "message": f"go {i}"})
            assert response["success"] is True, (i, delay, response)
            await asyncio.sleep(delay)  # the instant under test, not a synchronization
            read = await _settle(agent, f"a{i}")
            statuses = [m["status"] for m in read if m["type"] == "status"]
            assert statuses == [] or statuses[-1] == "idle", (i, delay, statuses)
            if "turn_start" in [m["type"] for m in read]:
                assert [m["type"] for m in read].count("turn_end") == 1, (i, delay)
        assert await agent.finish() == 0
    finally:
        await agent.kill()


async def test_abort_at_any_instant_of_a_compaction_answers_it(tmp_path):
    """``session_op compact`` aborted at 16 instants from 0 to 0.6 s: the compact command always
    gets its response (the summary or "compaction aborted"), the agent ends idle, and a prompt is
    accepted afterwards.

    Covers: R9.2.7, R9.2.21
    """
    steps = [{"blocks": [{"type": "text", "text": "A long enough answer to be worth summarizing. " * 20}]}]
    home = write_scripted_home(
        tmp_path / "home", steps, loop=True, record=False, script_extra={"summary_delay_ms": 300}
    )
    project = tmp_path / "project"
    project.mkdir()
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        for i in range(3):  # some history to compact
            await agent.send({"type": "prompt", "message": f"tell me {i}"})
            await agent.idle()
        for i, delay in enumerate(_instants(16, 0.6, seed=11)):
            command = {
                "type": "session_op",
                "id": f"c{i}",
                "op": "compact",
                "args": {"keep_recent_tokens": 1},
            }
            await agent.send(command)
            await asyncio.sleep(delay)
            await agent.send({"type": "abort", "id": f"a{i}"})
            read = await agent.until(_response_to(f"a{i}"))
            if not any(m.get("id") == f"c{i}" for m in read):
                read += await agent.until(_response_to(f"c{i}"))
            statuses = [m["status"] for m in read if m["type"] == "status"]
            assert statuses == [] or statuses[-1] == "idle", (i, delay, statuses)
        response, _ = await agent.request({"type": "prompt", "id": "last", "message": "still there?"})
        assert response["success"] is True
        await agent.idle()
        assert await agent.finish() == 0
    finally:
        await agent.kill()


async def test_an_abort_right_after_a_prompt_through_the_daemon_leaves_it_idle(tmp_path):
    """Through the daemon, prompt and abort back to back: agent.status says idle, a new prompt runs
    a turn, and terminate does not wait out a grace period (it is not deferred).

    Covers: R9.2.7, R10.1.9
    """
    home = write_scripted_home(tmp_path / "home", [_busy_step(False)], loop=True, extensions=TOOLS)
    project = tmp_path / "project"
    project.mkdir()
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
        agent_id = created["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "at", "agent_id": agent_id})
        await client.send({"type": "prompt", "id": "p", "agent_id": agent_id, "message": "go"})
        aborted, _ = await client.request({"type": "abort", "id": "a", "agent_id": agent_id})
        assert aborted["success"] is True
        status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": agent_id})
        assert status["data"]["agents"][0]["status"] == "idle", status
        again, _ = await client.request(
            {"type": "prompt", "id": "p2", "agent_id": agent_id, "message": "again"}
        )
        assert again["success"] is True, again
        await client.until(lambda m: m["type"] == "turn_start" and m.get("agent_id") == agent_id)
        await client.request({"type": "abort", "id": "a2", "agent_id": agent_id})
        stopped, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent_id})
        assert stopped["data"] == {"deferred": False}, stopped
    finally:
        await daemon.kill()

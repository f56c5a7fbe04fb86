"""``AgentProcess.hand_over``: a runtime several tests share reaches the next one idle, with nothing
of the last one's left to read, even when that one stopped mid-turn on a permission request."""

from __future__ import annotations

from pathlib import Path

from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home
from shard.testing.tools import TEST_TOOLS


async def test_a_turn_left_waiting_on_a_permission_is_ended_and_nothing_is_left_to_read(
    home: Path, project: Path
) -> None:
    write_scripted_home(
        home, [tool_step("touch", {"path": "made.txt"}), text_step("ok")], extensions=TEST_TOOLS
    )
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        await agent.until_type("permission_request")  # a test that stopped here, its turn still going
        assert await agent.hand_over() is agent
        assert agent.seen == []
        resp, before = await agent.request({"type": "prompt", "id": "next-test", "message": "next"})
        assert before == [], "nothing of the last test's turn arrives after the hand-over"
        assert resp["success"] is True, "the runtime was idle: a prompt mid-turn is refused"
        await agent.idle()
        assert not (project / "made.txt").exists(), "the waiting call was ended, never allowed"
    finally:
        await agent.kill()


async def test_a_turn_a_test_started_and_never_read_is_ended_before_the_next_test(
    home: Path, project: Path
) -> None:
    slow = {"blocks": [{"type": "pause", "ms": 300}, {"type": "text", "text": "ok"}]}
    write_scripted_home(home, [slow], loop=True)
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})  # and read nothing of its turn
        await agent.hand_over()
        resp, before = await agent.request({"type": "prompt", "id": "next", "message": "again"})
        assert before == []
        assert resp["success"] is True, "the runtime was idle: a prompt mid-turn is refused"
        read = await agent.idle()
        assert [m["type"] for m in agent.seen].count("turn_start") == 1, "only the next test's turn"
        assert [m["message"]["content"][0]["text"] for m in read if m["type"] == "message_complete"] == [
            "again",
            "ok",
        ]
    finally:
        await agent.kill()


async def test_an_answer_a_test_never_read_is_read_before_the_next_test(home: Path, project: Path) -> None:
    write_scripted_home(home, [text_step("ok")])
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        await agent.send({"type": "set_mode", "id": "unread", "mode": "plan"})  # idle all along
        await agent.hand_over()
        resp, before = await agent.request({"type": "list_modes", "id": "next-test"})
        assert before == [], "the last test's answer and mode_changed were read in the hand-over"
        assert resp["data"]["active"] == "plan"
    finally:
        await agent.kill()

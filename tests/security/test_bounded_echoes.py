"""Bounded echoes (issue 9, item 6a): an error quotes the offending value cut to at most 200
characters (with its length), and no error message on the wire is longer than 2,000 characters —
so a 10 MB ``agent_id`` costs its sender a small error, not a 10 MB one, and the connection goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.protocol.codec import error_response
from shard.protocol.errors import MAX_MESSAGE_CHARS, ErrorCode, ShardError, shown
from shard.testing import AgentProcess, DaemonProcess, text_step, tool_step, write_scripted_home
from shard.testing.reader import MessageReader

HUGE = 10 * 1024 * 1024
BIG = 1024 * 1024
SMALL_RESPONSE = 4096  # bytes: room for a message, an id and the envelope, far below any echo


def test_shown_keeps_short_values_and_cuts_long_ones():
    """``shown`` is the repr of a short value, and at most 200 characters of a long one, ending in
    an ellipsis and the value's length."""
    assert shown("agent-1") == "'agent-1'"
    assert shown(42) == "42"
    long = shown("x" * HUGE)
    assert len(long) <= 200
    assert long.startswith("'xxx")
    assert "…" in long
    assert str(HUGE) in long
    assert len(shown(["y" * 1000] * 1000, limit=50)) <= 50


def test_every_error_message_is_capped_once():
    """Whatever a message was built from, a ShardError (and so every error response and error event
    built from one) carries at most MAX_MESSAGE_CHARS characters, keeping its start and its end."""
    error = ShardError(ErrorCode.INTERNAL_ERROR, "start " + "z" * HUGE + " end")
    assert len(error.message) <= MAX_MESSAGE_CHARS
    assert error.message.startswith("start ")
    assert error.message.endswith(" end")
    assert len(error_response(error, id="1", command="prompt").to_json()) < SMALL_RESPONSE


async def _small_error(client: MessageReader, message: dict[str, Any], code: str) -> dict[str, Any]:
    """Send ``message`` (which has an id), return its error response after checking it is small."""
    await client.send_raw(orjson.dumps(message) + client.terminator)
    read = await client.until(lambda m: m.get("type") == "response" and m.get("id") == message["id"])
    response = read[-1]
    size = len(orjson.dumps(response))
    assert size < SMALL_RESPONSE, f"{size} bytes of error for {message['type'][:40]}"
    assert response["success"] is False
    assert response["error"]["code"] == code, response
    return response


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def test_the_daemon_never_echoes_a_huge_value(tmp_path, project):
    """Over the unix socket: a 10 MB agent_id (per-agent command and agent.attach), a 1 MB unknown
    type, a huge session_id, parent_agent_id or cwd in agent.create and a huge choice_id for an open
    permission request each get a small error (under 4 KB) with the right code, and the connection
    still answers."""
    home = tmp_path / "home"
    write_scripted_home(home, [tool_step("bash", {"command": "true"}), text_step("done")])
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        huge_id = "agent-" + "a" * HUGE
        await _small_error(
            client, {"type": "prompt", "id": "p", "agent_id": huge_id, "message": "x"}, "NOT_FOUND"
        )
        await _small_error(client, {"type": "agent.attach", "id": "a", "agent_id": huge_id}, "NOT_FOUND")
        unknown = await _small_error(client, {"type": "t" * BIG, "id": "t"}, "INVALID_REQUEST")
        assert len(unknown.get("command", "")) <= 200
        create = {"type": "agent.create", "cwd": str(project)}
        await _small_error(client, {**create, "id": "s", "session_id": "sess-" + "s" * BIG}, "NOT_FOUND")
        await _small_error(
            client, {**create, "id": "pa", "parent_agent_id": "agent-" + "p" * BIG}, "NOT_FOUND"
        )
        await _small_error(client, {**create, "id": "c", "cwd": "/" + "c" * BIG}, "INVALID_REQUEST")

        resp, _ = await client.request({"type": "agent.create", "id": "ok", "cwd": str(project)})
        agent = resp["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "at", "agent_id": agent})
        await client.send({"type": "prompt", "agent_id": agent, "message": "run it"})
        request = (await client.until_type("permission_request"))[-1]
        answer = {
            "type": "permission_response",
            "id": "ch",
            "agent_id": agent,
            "request_id": request["request_id"],
        }
        await _small_error(client, {**answer, "choice_id": "c" * BIG}, "INVALID_REQUEST")

        listed, _ = await client.request({"type": "agent.list", "id": "still-up"})
        assert listed["success"] is True
    finally:
        await daemon.kill()


async def test_a_direct_agent_never_echoes_a_huge_value(tmp_path, project):
    """Over ``shard agent --stdio``: a 1 MB unknown type, and huge values for set_mode, set_model,
    set_reasoning_level, a fork's from_entry_id and an open request's choice_id each get a small error
    with the right code, and the agent still answers."""
    home = tmp_path / "home"
    write_scripted_home(
        home,
        [tool_step("bash", {"command": "true"}), text_step("done")],
        models=[{"id": "m", "context_window": 100_000, "reasoning_levels": ["low", "high"]}],
    )
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        unknown = await _small_error(agent, {"type": "t" * BIG, "id": "t"}, "INVALID_REQUEST")
        assert len(unknown.get("command", "")) <= 200
        await _small_error(agent, {"type": "set_mode", "id": "m", "mode": "m" * HUGE}, "NOT_FOUND")
        await _small_error(agent, {"type": "set_model", "id": "mo", "model": "x/" + "m" * HUGE}, "NOT_FOUND")
        await _small_error(
            agent,
            {"type": "set_reasoning_level", "id": "r", "model": "test/m", "effort": "e" * BIG},
            "NOT_FOUND",
        )
        await _small_error(
            agent,
            {"type": "set_reasoning_level", "id": "r2", "model": "m" * BIG, "effort": "low"},
            "CONFLICT",
        )
        fork = {"type": "session_op", "id": "f", "op": "fork", "args": {"from_entry_id": "e" * BIG}}
        await _small_error(agent, fork, "NOT_FOUND")

        await agent.send({"type": "prompt", "message": "run it"})
        request = (await agent.until_type("permission_request"))[-1]
        answer = {"type": "permission_response", "id": "ch", "request_id": request["request_id"]}
        await _small_error(agent, {**answer, "choice_id": "c" * BIG}, "INVALID_REQUEST")

        resp, _ = await agent.request({"type": "list_modes", "id": "still-up"})
        assert resp["success"] is True
    finally:
        await agent.kill()

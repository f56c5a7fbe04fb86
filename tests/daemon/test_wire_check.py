"""The check every daemon test runs on what its clients receive (``shard.testing.wire``): it must
refuse what the protocol refuses, or a daemon that sent bare dicts of the wrong shape would pass."""

from __future__ import annotations

import pytest

from shard.testing.wire import problem_with

OK = {"type": "response", "success": True}
INFO = {"agent_id": "agent-1", "cwd": "/p", "status": "idle", "runtime_state": "running", "created_at": 1.0}


@pytest.mark.parametrize(
    "message",
    [
        {"type": "hello", "protocol_version": "0.1.0", "server_version": "x", "capabilities": ["unix"]},
        {"type": "agent_status_changed", "agent_id": "agent-1", "status": "idle", "runtime_state": "stopped"},
        {"type": "agent_spawned", "agent_id": "agent-1", "info": INFO},
        {**OK, "id": "c", "command": "agent.create", "data": {"agent_id": "a"}},
        {"type": "response", "command": "agent.detach", "success": True},
        {**OK, "id": "t", "command": "agent.terminate", "data": {"deferred": True}},
    ],
)
def test_valid_daemon_messages_pass(message):
    assert problem_with(message) is None


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ({"type": "agent_gone", "agent_id": "agent-1"}, "parse_event"),
        ({"type": "agent_status_changed", "agent_id": "agent-1", "status": "idle"}, "runtime_state"),
        (
            {"type": "agent_status_changed", "agent_id": "a", "status": "idle", "runtime_state": "paused"},
            "runtime_state",
        ),
        ({"type": "agent_spawned", "agent_id": "agent-1", "info": {**INFO, "status": "busy"}}, "status"),
        ({"type": "sync", "agent_id": "a", "status": "idle", "mode": "build"}, "live_window"),
        ({**OK, "command": "agent.create", "data": {"id": "a"}}, "agent.create"),
        ({**OK, "command": "agent.detach", "data": {"x": 1}}, "no result model"),
        ({"type": "status", "agent_id": 5, "status": "idle"}, "agent_id"),
    ],
)
def test_invalid_messages_are_named(message, why):
    """Covers: R5.0.2, R5.0.3"""
    problem = problem_with(message)
    assert problem is not None
    assert why in problem

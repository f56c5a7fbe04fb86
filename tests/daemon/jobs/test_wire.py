"""Where subagent job commands are accepted and how they are addressed (PROTOCOL §5.2, §10.3)."""

from __future__ import annotations

import pytest

from jobs.jobkit import TASK, parent
from shard.protocol.codec import parse_command
from shard.protocol.errors import FrameError


def test_job_commands_are_refused_on_a_direct_connection():
    """A runtime's own stdio (orchestrator=False) refuses every subagent command.

    Covers: R10.3.1
    """
    for kind in ("create", "wait", "steer", "relaunch", "status", "stop"):
        with pytest.raises(FrameError, match="only accepted on a daemon connection"):
            parse_command(
                f'{{"type":"subagent.{kind}","parent_agent_id":"agent-1"}}'.encode(), orchestrator=False
            )


def test_job_commands_name_their_parent_in_the_payload(harness):
    """Without parent_agent_id a job command is INVALID_REQUEST, the connection still serving; a
    routing agent_id is not how the parent is named (the parent is the payload field).

    Covers: R5.2.5
    """
    client, parent_id = parent(harness)
    missing = client.request({"type": "subagent.create", "name": "a", "task": TASK})
    assert missing["error"]["code"] == "INVALID_REQUEST"
    routed = client.request({"type": "subagent.status", "agent_id": parent_id})
    assert routed["error"]["code"] == "INVALID_REQUEST"
    ok = client.request({"type": "subagent.status", "parent_agent_id": parent_id})
    assert ok["data"] == {"agents": [], "jobs": []}

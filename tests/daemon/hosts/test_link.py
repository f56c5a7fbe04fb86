"""What crosses a remote runtime's link to the daemon (``shard.daemon.hosts.link.scoped``)."""

from __future__ import annotations

import orjson

from shard.daemon.hosts.link import scoped
from shard.protocol.errors import ShardError
from shard.protocol.framing import Oversized


def test_a_subagent_command_passes_as_the_links_own_agent():
    line = scoped(
        b'{"type":"subagent.create","id":"c","parent_agent_id":"agent-other","name":"a","task":"t"}',
        "agent-mine",
    )
    assert isinstance(line, bytes)
    assert orjson.loads(line)["parent_agent_id"] == "agent-mine"
    line = scoped(b'{"type":"subagent.wait","id":"w","handles":["a"]}', "agent-mine")
    assert isinstance(line, bytes)
    assert orjson.loads(line)["parent_agent_id"] == "agent-mine"


def test_everything_else_is_refused():
    for raw in (
        b'{"type":"agent.create","cwd":"/"}',
        b'{"type":"prompt","agent_id":"agent-x","message":"hi"}',
        b'{"type":"web.enroll"}',
        b"[1, 2]",
        b"not json",
    ):
        refused = scoped(raw, "agent-mine")
        assert isinstance(refused, ShardError)
        assert refused.code.value == "INVALID_REQUEST"
    assert isinstance(scoped(Oversized(10**9, b"{"), "agent-mine"), ShardError)

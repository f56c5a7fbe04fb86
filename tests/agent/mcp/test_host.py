"""The runtime's MCP servers, in-process against real demo servers: what a turn's ``prepare`` adds
and reports, the restart policy after crashes, the ``--tools`` allow-list, and close."""

from __future__ import annotations

import pytest

from agent.mcp._servers import alive, demo, pids
from shard.agent.config.settings import Config
from shard.agent.mcp.host import MAX_RESTARTS, McpHost
from shard.agent.mcp.tool import McpArgs
from shard.agent.sink import EventSink
from shard.agent.tools.base import ToolContext, ToolFailure
from shard.protocol.events import EventBase


def _sink() -> tuple[EventSink, list[EventBase]]:
    seen: list[EventBase] = []
    events = EventSink(seen.append)
    events.set_status("streaming")  # prepare runs inside a turn
    return events, seen


async def _call(tools, name: str, tmp_path, **args):
    return await tools[name].execute(McpArgs(**args), ToolContext(cwd=tmp_path))


async def test_prepare_adds_the_tools_once_and_reports_a_taken_name(tmp_path):
    host = McpHost((demo(),), tmp_path)
    events, seen = _sink()
    tools = {"demo__shout": object()}  # a tool of that name already: the server's is left out
    try:
        await host.prepare(tools, events)  # type: ignore[arg-type]
        first = set(tools)
        await host.prepare(tools, events)  # type: ignore[arg-type]
        assert set(tools) == first
        assert {"demo__add", "demo__crash"} <= first
        assert tools["demo__add"].read_only is True
        line = "MCP tool 'shout' of server 'demo' is left out: the name demo__shout is taken"
        errors = [e.to_wire() for e in seen if e.type == "error"]
        assert errors == [{"type": "error", "code": "TOOL_ERROR", "message": line, "fatal": False}]
        assert (await _call(tools, "demo__add", tmp_path, a=1, b=2)).content.to_wire()["text"] == "3"
    finally:
        await host.close()


@pytest.mark.slow
async def test_a_server_that_keeps_dying_is_restarted_at_most_three_times(tmp_path):
    written = tmp_path / "pids"
    host = McpHost((demo(env=(("DEMO_PIDS", str(written)),)),), tmp_path)
    events, _ = _sink()
    tools: dict = {}
    try:
        await host.prepare(tools, events)
        for _ in range(MAX_RESTARTS + 1):
            with pytest.raises(ToolFailure, match=r"died during the call\. It is started again"):
                await _call(tools, "demo__crash", tmp_path)
        with pytest.raises(
            ToolFailure, match=r"is not available: it died 4 times and is not started again\.$"
        ):
            await _call(tools, "demo__shout", tmp_path, text="x")
        assert events.status == "streaming"
        assert len(pids(written)) == MAX_RESTARTS + 1
    finally:
        await host.close()
    assert not any(alive(pid) for pid in pids(written))


async def test_the_tools_allow_list_picks_servers_and_tools(tmp_path):
    config = Config(home=tmp_path, mcp_servers=(demo("a"), demo("b")))
    assert McpHost.for_config(config, tmp_path, allow=["read", "ls"]) is None, "no server tool named"
    host = McpHost.for_config(config, tmp_path, allow=["read", "b__add"])
    assert host is not None
    assert host.may_name("b__anything")
    assert not host.may_name("a__anything"), "server a is not started at all"
    events, _ = _sink()
    tools: dict = {}
    try:
        await host.prepare(tools, events)
    finally:
        await host.close()
    assert set(tools) == {"b__add"}

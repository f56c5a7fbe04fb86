"""``agent.rename`` against a real daemon: every connection hears ``agent_changed`` (attached or
not), the name is kept across a daemon restart, null gives the derived name back, and a bad name or
agent is refused without a change."""

from __future__ import annotations

from daemon_helpers import connect, create_agent

from shard.daemon.rename import cleaned


async def test_a_rename_reaches_every_client_and_survives_a_restart(daemon_factory, transport, project):
    daemon = await daemon_factory([])
    renamer = await connect(daemon, transport)
    watcher = await connect(daemon, transport)  # attached to nothing
    agent = await create_agent(renamer, project)

    resp, _ = await renamer.request(
        {"type": "agent.rename", "id": "r1", "agent_id": agent, "name": "  Fix the\nflaky test "}
    )
    assert resp["success"] is True, resp
    assert resp["data"]["info"]["name"] == "Fix the flaky test"
    changed = (await watcher.until(lambda m: m["type"] == "agent_changed"))[-1]
    assert changed["agent_id"] == agent
    assert changed["info"]["name"] == "Fix the flaky test"

    too_long, _ = await renamer.request(
        {"type": "agent.rename", "id": "r2", "agent_id": agent, "name": "x" * 129}
    )
    assert too_long["error"]["code"] == "INVALID_REQUEST"
    unknown, _ = await renamer.request(
        {"type": "agent.rename", "id": "r3", "agent_id": "agent-no", "name": "x"}
    )
    assert unknown["error"]["code"] == "NOT_FOUND"

    await daemon.stop()
    again = await daemon_factory(None)
    client = await connect(again, transport)
    listed, _ = await client.request({"type": "agent.list", "id": "l"})
    assert next(a for a in listed["data"]["agents"] if a["agent_id"] == agent)["name"] == "Fix the flaky test"

    cleared, _ = await client.request({"type": "agent.rename", "id": "r4", "agent_id": agent, "name": None})
    assert "name" not in cleared["data"]["info"]


def test_a_name_is_one_line() -> None:
    assert cleaned(" a\t b\n\nc ") == "a b c"
    assert cleaned("   ") is None
    assert cleaned(None) is None

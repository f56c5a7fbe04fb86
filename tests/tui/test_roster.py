"""The agent list's fold of orchestrator events."""

from __future__ import annotations

from tui_helpers import info

from shard.protocol.events import AgentActivity, AgentExited, AgentSpawned, AgentStatusChanged
from shard.tui.roster import Roster


def test_rows_follow_spawn_status_activity_and_exit():
    """Every client sees each agent's status and activity, attached or not; an agent that waits on
    a request says it needs an answer.

    Covers: R10.2.11, R10.2.12, R10.2.13, R10.2.14, R10.2.20
    """
    roster = Roster.of([info("a1", name="one", provider="t", model="m")])
    assert roster.rows["a1"].line() == "one · idle"
    assert roster.rows["a1"].model == "t/m"
    assert roster.apply(AgentSpawned(agent_id="a2", info=info("a2")))
    activity = AgentActivity(agent_id="a1", timestamp=1, phase="tool", status="streaming", tool_name="bash")
    assert roster.apply(activity)
    assert roster.rows["a1"].line() == "one · streaming · tool: bash"
    waiting = AgentStatusChanged(agent_id="a1", status="waiting_for_permission", runtime_state="running")
    assert roster.apply(waiting)
    assert roster.rows["a1"].needs_answer
    assert roster.rows["a1"].line().endswith("needs an answer")
    assert roster.apply(AgentExited(agent_id="a2", reason="crashed", exit_code=1))
    assert roster.rows["a2"].line() == "a2 · failed"
    assert not roster.apply(AgentStatusChanged(agent_id="ghost", status="idle", runtime_state="running"))


def test_descent_and_who_asks():
    """A grandchild descends from its grandparent, not the other way round, and a cycle ends the
    walk; a request dialog names the asker by its display name (else alias, …) and its id.

    Covers: R6.3.8
    """
    roster = Roster.of(
        [
            info("root"),
            info("kid", parent_agent_id="root", alias="scout", display_name="Scout the first"),
            info("grandkid", parent_agent_id="kid", alias="runner"),
            info("loop1", parent_agent_id="loop2"),
            info("loop2", parent_agent_id="loop1"),
        ]
    )
    assert roster.descends("grandkid", "root")
    assert roster.descends("kid", "root")
    assert not roster.descends("root", "kid")
    assert not roster.descends("root", "root")
    assert not roster.descends("loop1", "root")
    assert roster.asker("kid") == "Scout the first (kid)"
    assert roster.asker("grandkid") == "runner (grandkid)"
    assert roster.asker("root") == "root"
    assert roster.asker("unknown") == "unknown"

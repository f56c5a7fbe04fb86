"""The agent list's fold of orchestrator events."""

from __future__ import annotations

from tui_helpers import info

from shard.protocol.events import AgentActivity, AgentChanged, AgentExited, AgentSpawned, AgentStatusChanged
from shard.tui.roster import Roster


def test_rows_follow_spawn_status_activity_and_exit():
    """Every client sees each agent's status and activity, attached or not; an agent that waits on
    a request says it needs an answer.

    Covers: R10.2.11, R10.2.12, R10.2.13, R10.2.14, R10.2.20
    """
    roster = Roster.of([info("a1", name="one", provider="t", model="m")])
    assert roster.rows["a1"].line() == "one · idle · t/m"
    assert roster.rows["a1"].model == "t/m"
    assert roster.apply(AgentSpawned(agent_id="agent-00000000000000a2", info=info("agent-00000000000000a2")))
    activity = AgentActivity(agent_id="a1", timestamp=1, phase="tool", status="streaming", tool_name="bash")
    assert roster.apply(activity)
    assert roster.rows["a1"].line() == "one · tool: bash · t/m"
    waiting = AgentStatusChanged(agent_id="a1", status="waiting_for_permission", runtime_state="running")
    assert roster.apply(waiting)
    assert roster.rows["a1"].needs_answer
    assert roster.rows["a1"].line() == "one · needs an answer · t/m"
    assert roster.apply(AgentExited(agent_id="agent-00000000000000a2", reason="crashed", exit_code=1))
    assert roster.rows["agent-00000000000000a2"].line() == "p #00a2 · failed"  # unnamed: folder, id's end
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


def test_the_model_is_named_once_and_the_list_is_ordered_by_recent_activity():
    """The registry's model id already names its provider (``scripted/demo`` with provider
    ``scripted``): the row says it once. The most recently active agent comes first — an activity's
    own timestamp, another event's arrival time, else its creation — and a re-list keeps what was
    seen, the model learnt from the agent's own events included.

    Covers: R10.2.11, R10.2.20, R11.0.19
    """
    roster = Roster.of(
        [
            info("a1", name="old", created_at=100, provider="scripted", model="scripted/demo"),
            info("a2", name="new", created_at=200, provider="openai", model="gpt-5.5"),
            info("a3", name="mid", created_at=150),
        ]
    )
    assert roster.rows["a1"].line() == "old · idle · scripted/demo"
    assert roster.rows["a2"].model == "openai/gpt-5.5"
    assert [r.agent_id for r in roster.ordered()] == ["a2", "a3", "a1"]
    roster.apply(AgentActivity(agent_id="a1", timestamp=300, phase="thinking", status="streaming"))
    assert [r.agent_id for r in roster.ordered()] == ["a1", "a2", "a3"]
    roster.apply(AgentStatusChanged(agent_id="a3", status="idle", runtime_state="stopped"), at=400)
    assert [r.agent_id for r in roster.ordered()] == ["a3", "a1", "a2"]
    assert roster.know_model("a3", "test/m")
    assert not roster.know_model("a3", "test/m")
    relisted = Roster.of([info("a1", created_at=100), info("a3", name="mid", created_at=150)], seen=roster)
    assert [r.agent_id for r in relisted.ordered()] == ["a3", "a1"]
    assert relisted.rows["a3"].model == "test/m"
    spawned = info("a4", name="kid", created_at=50)
    relisted.apply(AgentSpawned(agent_id="a4", info=spawned), at=500)
    assert relisted.ordered()[0].agent_id == "a4"


def test_an_agent_on_another_host_says_where_it_runs():
    """The list names the host of an agent that runs on one (issue: remote hosts, item 1)."""
    roster = Roster.of([info("a1", name="one", host="box"), info("agent-00000000000000b2", host="gpu")])
    assert roster.rows["a1"].title == "one @box"
    assert roster.rows["agent-00000000000000b2"].line().startswith("p #00b2 @gpu · idle")
    assert Roster.of([info("a3", name="three")]).rows["a3"].title == "three"


def test_a_rename_renames_the_row_and_keeps_what_it_learnt():
    """``agent_changed`` (agent.rename) to every client: the row takes the new name, or its derived
    one when the name is cleared; its activity and order stay."""
    roster = Roster.of([info("a1", name="one")])
    busy = AgentActivity(agent_id="a1", timestamp=50, phase="tool", status="streaming", tool_name="bash")
    roster.apply(busy)
    assert roster.apply(AgentChanged(agent_id="a1", info=info("a1", name="Fix the parser")))
    row = roster.rows["a1"]
    assert (row.title, row.activity, row.last) == ("Fix the parser", "tool: bash", 50)
    assert roster.apply(AgentChanged(agent_id="a1", info=info("a1")))
    assert roster.rows["a1"].title == "p #a1"
    assert not roster.apply(AgentChanged(agent_id="ghost", info=info("ghost")))


def test_a_renamed_subagent_shows_the_name_a_person_gave():
    """A subagent's own name is its alias, shown as its display name until a person renames it."""
    child = info("kid", name="scout", alias="scout", display_name="Explorer · scout")
    roster = Roster.of([child])
    assert roster.rows["kid"].title == "Explorer · scout"
    roster.apply(
        AgentChanged(
            agent_id="kid", info=info("kid", name="Parser", alias="scout", display_name="Explorer · scout")
        )
    )
    assert roster.rows["kid"].title == "Parser"

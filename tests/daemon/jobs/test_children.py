"""A launched child's configuration: general-purpose, or from an agent definition (its alias pool,
display name, model/mode, narrowed tools and headless policy, system prompt) — in process."""

from __future__ import annotations

from jobs.jobkit import batch, command, create, finish, parent
from shard.daemon.jobs.children import ChildSpec, Launch, alias_for, child_record
from shard.daemon.record import AgentRecord

REVIEWER = ChildSpec(
    name="reviewer",
    prompt="You review diffs. PROMPT-MARK-91",
    model="scripted/review",
    mode="plan",
    tools=("read", "grep", "bash"),
    headless_policy="allow_if_rule_matches",
    names=("ada", "grace"),
)


def _parent(**fields) -> AgentRecord:
    return AgentRecord(agent_id="agent-p", session_id="sess-p", cwd="/project", **fields)


def test_a_definition_narrows_what_the_parent_allowed_and_never_widens_it():
    """Tools are intersected with the parent's allow-list; the stricter headless policy wins; the
    launch's own model and mode come before the definition's, which come before the parent's.

    Covers: R10.1.6
    """
    p = _parent(model="scripted/main", mode="build", tools=["read", "grep"], headless_policy="deny")
    child = child_record(p, "ada", REVIEWER, Launch(), 1.0)
    assert child.tools == ["read", "grep"]  # bash is not the parent's to give
    assert child.headless_policy == "deny"
    assert (child.model, child.mode) == ("scripted/review", "plan")
    assert child.system_prompt == REVIEWER.prompt
    assert (child.definition_name, child.display_name, child.alias) == ("reviewer", "reviewer · ada", "ada")
    assert (child.parent_agent_id, child.depth, child.cwd) == ("agent-p", 1, "/project")
    loose = _parent(headless_policy="allow_if_rule_matches")
    strict = ChildSpec(name="x", prompt="", headless_policy="queue")
    assert child_record(loose, "x", strict, Launch(), 1.0).headless_policy == "queue"
    overridden = child_record(p, "ada", REVIEWER, Launch(model="scripted/other", mode="build"), 1.0)
    assert (overridden.model, overridden.mode) == ("scripted/other", "build")
    general = child_record(p, "scout", None, Launch(), 1.0)
    assert (general.model, general.mode, general.tools) == ("scripted/main", "build", ["read", "grep"])
    assert (general.definition_name, general.display_name, general.system_prompt) == (None, None, None)


def test_aliases_come_from_the_definitions_pool_then_the_name():
    """Covers: R10.3.4, R10.3.6"""
    assert alias_for("reviewer", REVIEWER, []) == "ada"
    assert alias_for("reviewer", REVIEWER, ["ADA"]) == "grace"  # compared case-insensitively
    assert alias_for("reviewer", REVIEWER, ["ada", "grace"]) == "reviewer"
    assert alias_for("reviewer", REVIEWER, ["ada", "grace", "reviewer"]) == "reviewer-2"
    assert alias_for("scout", None, ["scout"]) == "scout-2"


def test_a_launch_by_a_definitions_name_shows_it_everywhere_but_never_its_prompt(harness):
    """``name`` selects the definition (case-insensitively): the create answer, AgentInfo, the run's
    events and snapshots carry definition_name and "definition · alias"; the system prompt goes to
    the child's configuration only. A name with no definition runs a general-purpose child.

    Covers: R10.3.20, R10.3.48, R10.3.62, R11.0.19, R11.0.22, R11.2.6
    """
    harness.manifests.definitions["reviewer"] = REVIEWER
    client, parent_id = parent(harness)
    runs = batch(client, parent_id, "parallel", "Reviewer", "Reviewer", "scout")["runs"]
    assert [(r["alias"], r.get("definition_name"), r.get("display_name")) for r in runs] == [
        ("ada", "reviewer", "reviewer · ada"),
        ("grace", "reviewer", "reviewer · grace"),
        ("scout", None, None),
    ]
    info = {m["agent_id"]: m["info"] for m in client.of_type("agent_spawned")}
    assert info[runs[0]["agent_id"]]["display_name"] == "reviewer · ada"
    assert info[runs[0]["agent_id"]]["definition_name"] == "reviewer"
    assert harness.runtime(runs[0]["agent_id"]).record.system_prompt == REVIEWER.prompt
    assert harness.runtime(runs[2]["agent_id"]).record.system_prompt is None
    finish(harness, runs[0]["agent_id"])
    event = [m for m in client.of_type("subagent_run_changed") if m["run_id"] == runs[0]["run_id"]][-1]
    assert event["display_name"] == "reviewer · ada"
    status = command(client, "status", parent_id, targets=["ada"])["data"]["agents"][0]
    assert status["display_name"] == "reviewer · ada"
    assert status["run"]["definition_name"] == "reviewer"
    relaunched = command(client, "relaunch", parent_id, target="ada", task="again")["data"]
    assert relaunched["display_name"] == "reviewer · ada"
    assert "PROMPT-MARK-91" not in str([m for c in harness.clients for m in c.received])


def test_a_definition_seen_from_the_parents_directory_is_asked_for_each_task(harness):
    """The Manifests port is asked with the parent's cwd and the task's name.

    Covers: R10.3.17
    """
    asked: list[tuple[str, str]] = []
    harness.manifests.definition = lambda cwd, name: asked.append((cwd, name))  # type: ignore[method-assign]
    client, parent_id = parent(harness)
    create(client, parent_id, name="scout")
    assert asked == [("/project", "scout")]

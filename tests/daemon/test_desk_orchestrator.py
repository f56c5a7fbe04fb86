"""The orchestrator of ``agent.*`` on its own, against a fake desk (``fake_desk.py``): what it asks of
the desk for each command, with no broker behind it. The same commands through the whole broker are
``test_broker_core.py``'s."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fake_desk import FakeDesk

from shard.daemon.effects import Client
from shard.daemon.jobs.settings import JobSettings
from shard.daemon.orchestrator import Orchestrator
from shard.daemon.record import AgentRecord
from shard.protocol import commands as cmd
from shard.protocol.errors import ErrorCode, ShardError

DAEMON = Path(__file__).resolve().parents[2] / "src" / "shard" / "daemon"


def _setup(max_children: int = 64) -> tuple[FakeDesk, Orchestrator, Client]:
    desk = FakeDesk()
    return desk, Orchestrator(desk, JobSettings(max_children=max_children)), Client(1, "unix")


def _agent(desk: FakeDesk, agent_id: str = "agent-1", parent: str | None = None) -> None:
    record = AgentRecord(
        agent_id, f"sess-{agent_id}", "/project", parent_agent_id=parent, depth=int(bool(parent))
    )
    desk.manifests.add(record)
    desk.admit(record)
    desk.admitted.clear()


def test_create_writes_the_row_admits_the_agent_once_and_answers_when_its_runtime_is_up():
    desk, orchestrator, client = _setup()
    orchestrator.handle(client, cmd.AgentCreate(id="c1", cwd="/project"))
    assert [s.agent_id for s in desk.admitted] == list(desk.manifests.rows)
    assert client.waiting
    assert desk.replies(client) == [], "no answer before the runtime is up"
    desk.run_started()
    [reply] = desk.replies(client)
    assert reply["success"]
    assert reply["data"]["agent_id"] == desk.admitted[0].agent_id
    assert not client.waiting


def test_create_refused_by_the_disk_admits_nobody():
    desk, orchestrator, client = _setup()
    desk.manifests.full = True
    with pytest.raises(ShardError) as refused:
        orchestrator.handle(client, cmd.AgentCreate(id="c1", cwd="/project"))
    assert refused.value.code == ErrorCode.INTERNAL_ERROR
    assert desk.admitted == []
    assert desk.started == []


def test_a_child_by_agent_create_is_bound_by_the_job_limits_it_is_given():
    desk, orchestrator, client = _setup(max_children=1)
    _agent(desk, "parent")
    _agent(desk, "kid", parent="parent")
    with pytest.raises(ShardError) as refused:
        orchestrator.handle(client, cmd.AgentCreate(id="c1", cwd="/project", parent_agent_id="parent"))
    assert refused.value.code == ErrorCode.CONFLICT
    assert desk.admitted == []


def test_attach_asks_the_runtime_for_a_typed_sync_and_joins_on_its_answer():
    desk, orchestrator, client = _setup()
    _agent(desk)
    orchestrator.handle(client, cmd.AgentAttach(id="a1", agent_id="agent-1"))
    desk.run_started()
    [asked] = desk.asked
    assert isinstance(asked.command, cmd.RuntimeSync)
    assert client not in desk.slot("agent-1").attachments, "joined only once the snapshot is there"
    asked.answer(True, type="sync", status="idle")
    assert client in desk.slot("agent-1").attachments
    assert [m["type"] for m in desk.replies(client)] == ["response", "sync"]


def test_attach_whose_runtime_went_away_before_the_snapshot_fails_and_does_not_join():
    desk, orchestrator, client = _setup()
    _agent(desk)
    orchestrator.handle(client, cmd.AgentAttach(id="a1", agent_id="agent-1"))
    desk.run_started()
    desk.asked[0].answer(False)
    [reply] = desk.replies(client)
    assert reply["success"] is False
    assert reply["error"]["code"] == "RUNTIME_START_FAILED"
    assert client not in desk.slot("agent-1").attachments
    assert not client.waiting


def test_remove_tells_the_departments_and_forgets_through_the_desk():
    desk, orchestrator, client = _setup()
    _agent(desk, "parent")
    _agent(desk, "kid", parent="parent")
    orchestrator.handle(client, cmd.AgentRemove(id="r1", agent_id="parent"))
    assert desk.removed == ["kid", "parent"]
    assert desk.forgotten == ["kid", "parent"]
    assert desk.agents == {}
    assert desk.replies(client)[-1]["data"]["removed"] == ["kid", "parent"]


def test_no_department_imports_the_broker():
    """The departments know the desk only (``desk.py``): the broker is theirs to be given, not to
    import."""
    departments = [DAEMON / "orchestrator.py", DAEMON / "removal.py"]
    departments += [*(DAEMON / "jobs").glob("*.py"), *(DAEMON / "workspaces").glob("*.py")]
    importers = []
    for path in departments:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "shard.daemon.broker":
                importers.append(path.name)
            elif isinstance(node, ast.ImportFrom) and node.module == "shard.daemon":
                importers += [path.name for a in node.names if a.name == "broker"]
    assert len(departments) > 10
    assert importers == []

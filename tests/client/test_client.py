"""The daemon client against a real ``shard daemon`` on a scripted model, over both transports."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from shard.client import (
    CommandError,
    RequestTimeout,
    ShardClient,
    TurnTimeout,
    WebSession,
    choice_for,
)
from shard.protocol.events import (
    AgentSpawned,
    AgentStatusChanged,
    MessageDelta,
    PermissionRequest,
    PermissionResolved,
    SubagentRunChanged,
    Sync,
    TurnEnd,
)
from shard.protocol.queue import QueueChanged
from shard.testing import DaemonProcess
from shard.testing.home import text_step, tool_step
from shard.testing.web import enrollment_code


async def connect(daemon: DaemonProcess, transport: str, **options: Any) -> ShardClient:
    if transport == "unix":
        return await ShardClient.connect_unix(home=daemon.home, **options)
    code = await enrollment_code(daemon.socket)  # as `shard web enroll` prints it
    session = await WebSession.enroll(f"http://127.0.0.1:{daemon.port}/enroll#code={code}")
    return await ShardClient.connect_websocket(session, home=daemon.home, **options)


@pytest.fixture(params=["unix", "websocket"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


async def test_create_attach_and_prompt_and_wait(daemon_factory, project: Path, transport: str):
    """Over either transport: hello checked, agent.create + attach yield sync first, and
    prompt-and-wait returns the turn's final assistant message.

    Covers: R3.2, R3.3, R6.4.4, R9.1.3, R10.1.3, R10.1.18, R5.1.2, R12.1.2
    """
    daemon = await daemon_factory([text_step("All good here.", chunk=3)])
    async with await connect(daemon, transport) as client:
        assert client.connection.hello is not None
        assert client.connection.hello.protocol_version.startswith("0.")
        agent = await client.create_agent(project)
        stream = agent.events()
        first = await stream.next(10)
        assert isinstance(first, Sync)
        assert first.agent_id == agent.agent_id
        result = await agent.prompt_and_wait("How are things?", timeout=30)
        assert result.text == "All good here."
        assert [m.role for m in result.messages] == ["user", "assistant"]
        assert any(isinstance(e, MessageDelta) for e in result.events)
        assert result.turn_id is not None
        assert agent.agent_id in {a.agent_id for a in await client.list_agents()}


async def test_answer_a_permission_by_choice_id(daemon_factory, project: Path, transport: str):
    """A mutating tool asks; the SDK answers with the request's allow choice_id, the tool runs and
    permission_resolved closes the request.

    Covers: R6.3.1, R6.3.6, R5.1.8, R5.1.4
    """
    steps = [tool_step("touch", {"path": "made.txt"}, "Making it."), text_step("Made.")]
    daemon = await daemon_factory(steps)
    async with await connect(daemon, transport) as client:
        agent = await client.create_agent(project)
        asked: list[PermissionRequest] = []

        async def allow(request: PermissionRequest) -> str:
            asked.append(request)
            return choice_for(request, "allow")

        result = await agent.prompt_and_wait("make a file", timeout=30, on_permission=allow)
        assert result.text == "Made."
        assert len(asked) == 1
        assert (project / "made.txt").exists()
        resolved = [e for e in result.events if isinstance(e, PermissionResolved)]
        assert [r.request_id for r in resolved] == [asked[0].request_id]
        assert "allow" in (resolved[0].choice_id, resolved[0].decision)
        assert agent.pending == {}


async def test_two_agents_on_one_connection_are_demultiplexed(daemon_factory, project: Path):
    """Each attached agent's stream holds only its own events.

    Covers: R5.2.8, R12.4.2, R5.2.2
    """
    daemon = await daemon_factory([text_step("same answer")], loop=True)
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        one = await client.create_agent(project)
        two = await client.create_agent(project)
        first = await one.prompt_and_wait("to one", timeout=30)
        second = await two.prompt_and_wait("to two", timeout=30)
        assert first.messages[0].id != second.messages[0].id
        assert all(e.agent_id == one.agent_id for e in first.events)
        assert all(e.agent_id == two.agent_id for e in second.events)
        one_ids = {m.id for m in one.transcript.messages}
        two_ids = {m.id for m in two.transcript.messages}
        assert one_ids.isdisjoint(two_ids)
        assert len(one_ids) == len(two_ids) == 2


async def test_request_timeout_leaves_the_connection_usable(daemon_factory, project: Path):
    """subagent.wait on a child that never finishes holds its socket unanswered; the SDK's request
    timeout fires. Once another client stops the job the late answer arrives and is dropped, and the
    same connection serves the next request.

    Covers: R5.1.2, R12.5.1
    """
    daemon = await daemon_factory([{"blocks": [{"type": "text", "text": "thinking…"}], "stall": True}])
    async with (
        await ShardClient.connect_unix(home=daemon.home) as client,
        await ShardClient.connect_unix(home=daemon.home) as other,
    ):
        parent = await client.create_agent_id(project)
        job = await client.subagent_create(parent, name="slow", task="never ends")
        run = job.runs[0]
        with pytest.raises(RequestTimeout):
            await client.subagent_wait(parent, [run.run_id], request_timeout=0.5)
        status = await other.subagent_status(parent, [run.run_id])
        assert [a.agent_id for a in status.agents] == [run.agent_id]
        stopped = await other.subagent_stop(parent, job.job_id)
        assert stopped.job_id == job.job_id
        assert parent in {a.agent_id for a in await client.list_agents()}
        polled = await client.subagent_wait(parent, [run.run_id], timeout=0)
        assert polled.runs[0].state == "cancelled"
        late = [e for e in client.orchestrator_events().take_ready() if e.type == "response"]
        assert late == []  # the timed-out wait's answer came and was dropped


async def test_prompt_and_wait_times_out_on_a_stalled_turn(daemon_factory, project: Path):
    """The turn stalls: prompt_and_wait raises TurnTimeout (a TimeoutError) and the turn goes on.

    Covers: R5.1.4
    """
    daemon = await daemon_factory([{"blocks": [{"type": "text", "text": "and then…"}], "stall": True}])
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        agent = await client.create_agent(project)
        with pytest.raises(TurnTimeout):
            await agent.prompt_and_wait("go on", timeout=1.0)
        assert agent.status == "streaming"
        await agent.abort()


async def test_owned_agents_are_terminated_when_the_client_closes(daemon_factory, project: Path):
    """An agent this client created (and owns) is terminated on clean exit; one it only attached to
    is left running.

    Covers: R3.7, R3.8, R3.9, R10.1.22
    """
    daemon = await daemon_factory([text_step("hi")], loop=True)
    async with await ShardClient.connect_unix(home=daemon.home) as other:
        kept = await other.create_agent(project, own=False)
        kept_id = kept.agent_id
        changes = other.subscribe_orchestrator()
        async with await ShardClient.connect_unix(home=daemon.home) as client:
            owned = await client.create_agent(project)
            await owned.prompt_and_wait("hello", timeout=30)
            watched = await client.attach(kept_id or "")
            assert watched.owned is False
        # the turn may still be winding down (terminate is then deferred): wait for the stop
        event = await changes.next(20)
        while not (
            isinstance(event, AgentStatusChanged)
            and event.agent_id == owned.agent_id
            and event.runtime_state == "stopped"
        ):
            event = await changes.next(20)
        infos = {a.agent_id: a for a in await other.agent_status()}
        assert infos[owned.agent_id or ""].runtime_state == "stopped"
        assert infos[kept_id or ""].runtime_state == "running"


async def test_orchestrator_events_and_command_errors(daemon_factory, project: Path):
    """agent_spawned arrives on the orchestrator stream (agent_id as payload); a failed command is
    a CommandError carrying the wire code.

    Covers: R10.2.11, R10.2.20, R8.1, R6.4.7
    """
    daemon = await daemon_factory([text_step("hi")])
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        created = await client.create_agent_id(project)
        events = client.orchestrator_events()
        spawned = await events.next(10)
        while not isinstance(spawned, AgentSpawned):
            spawned = await events.next(10)
        assert spawned.agent_id == created
        with pytest.raises(CommandError) as info:
            await client.attach("agent-does-not-exist")
        assert info.value.code == "NOT_FOUND"
        assert "agent-does-not-exist" not in client.agents


async def test_turn_end_arrives_once_per_turn(daemon_factory, project: Path):
    """The primary stream yields sync, then every event of two turns, in order, none twice.

    Covers: R6.4.4, R6.4.5
    """
    daemon = await daemon_factory([text_step("one"), text_step("two")])
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        agent = await client.create_agent(project)
        await agent.prompt_and_wait("first", timeout=30)
        await agent.prompt_and_wait("second", timeout=30)
        seen = []
        stream = agent.events()
        while len([e for e in seen if isinstance(e, TurnEnd)]) < 2:
            seen.append(await stream.next(10))
        assert isinstance(seen[0], Sync)
        ends = [e.turn_id for e in seen if isinstance(e, TurnEnd)]
        assert len(set(ends)) == 2


async def test_subagent_stop_relaunch_and_status(daemon_factory, project: Path):
    """The subagent.* helpers on a live job: a steer into the stalled turn waits for its next
    provider boundary, which never comes — stopping the job ends the turn, and the steer answers
    conflict; relaunch the stopped child with a new task (same agent, a new run), and read its status.

    Covers: R5.2.5, R12.5.1, R12.5.7, R10.3.37
    """
    stalled = {"blocks": [{"type": "text", "text": "working…"}], "stall": True}
    daemon = await daemon_factory([stalled], loop=True)
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        parent = await client.create_agent_id(project)
        job = await client.subagent_create(parent, name="worker", task="work forever")
        run = job.runs[0]
        changes = client.subscribe_orchestrator()
        event = await changes.next(20)
        while not (isinstance(event, SubagentRunChanged) and event.state == "active"):
            event = await changes.next(20)
        steer = asyncio.ensure_future(client.subagent_steer(parent, "worker", "also this"))
        await asyncio.sleep(0.2)  # the steer is with the child's runtime, waiting for the turn
        assert not steer.done()
        stopped = await client.subagent_stop(parent, job.job_id)
        assert [c.run_id for c in stopped.cancelled] == [run.run_id]
        steered = await asyncio.wait_for(steer, 20)
        assert (steered.status, steered.run_id) == ("conflict", run.run_id)
        again = await client.subagent_relaunch(parent, run.agent_id, "work again")
        assert again.agent_id == run.agent_id
        assert again.run_id != run.run_id
        status = await client.subagent_status(parent)
        assert {j.job_id for j in status.jobs or []} == {job.job_id, again.job_id}
        await client.subagent_stop(parent, again.job_id)


async def test_the_agent_fold_exposes_the_queue_and_a_hand_back(
    daemon_factory, project: Path, transport: str
):
    """``Agent.queue`` follows ``queue_changed``; ``unqueue`` withdraws (and a second try is
    NOT_FOUND); an abort hands the rest back as a ``QueueChanged`` with ``returned``; a client that
    attaches later starts from ``sync.queue``.

    Covers: R9.2.5, R9.2.7, R6.4.20
    """
    stalled = {"blocks": [{"type": "text", "text": "working"}], "stall": True}
    daemon = await daemon_factory([stalled, text_step("unused")])
    async with await connect(daemon, transport) as client, await connect(daemon, "unix") as other:
        agent = await client.create_agent(project)
        stream = agent.subscribe()
        await agent.prompt("start")
        while not isinstance(await stream.next(10), MessageDelta):
            pass
        first = await agent.prompt("then the tests", streaming_behavior="follow_up")
        await agent.steer("also the port")
        while len(agent.queue) < 2:
            await stream.next(10)
        assert [(q.message, q.behavior) for q in agent.queue] == [
            ("then the tests", "follow_up"),
            ("also the port", "steer"),
        ]
        assert first.data["queued"]["queue_id"] == agent.queue[0].queue_id
        late = await other.attach(agent.agent_id or "", role="observer")
        assert [q.message for q in late.queue] == ["then the tests", "also the port"]

        withdrawn = await agent.unqueue(agent.queue[0].queue_id)
        assert withdrawn.message == "then the tests"
        with pytest.raises(CommandError) as missing:
            await agent.unqueue(withdrawn.queue_id)
        assert missing.value.code == "NOT_FOUND"

        await agent.abort()
        handed = None
        while handed is None:
            event = await stream.next(10)
            if isinstance(event, QueueChanged) and event.returned:
                handed = event
        assert [q.message for q in handed.returned or []] == ["also the port"]
        assert handed.reason == "aborted"
        assert agent.queue == []

"""A background child's requests at its parent's SDK clients (PROTOCOL §6.3): the fold in process,
then a real daemon whose child (on its own scripted model) asks while only the parent has clients."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from shard.client import Agent, Backoff, ShardClient, choice_for
from shard.client.delegated import CLOSED_WHILE_AWAY, Delegated
from shard.protocol.events import (
    AgentEvent,
    PermissionRequest,
    PermissionResolved,
    Sync,
    UiRequest,
    UiResolved,
)
from shard.testing.home import scripted_provider, text_step, tool_step

CHILD = "agent-child"


def ask(request_id: str, agent_id: str | None = CHILD) -> PermissionRequest:
    tag = {"agent_id": agent_id} if agent_id else {}
    return PermissionRequest(
        request_id=request_id, tool_name="touch", input={}, prompt="?", options=["deny"], **tag
    )


def resolved(request_id: str) -> PermissionResolved:
    return PermissionResolved(agent_id=CHILD, request_id=request_id, decision="deny", source="other")


# --- the fold -------------------------------------------------------------------------------------


def test_each_request_and_its_resolution_reach_the_consumer_once():
    """A re-shown request is not repeated; a resolution closes it once; a resolution of a request
    never shown, a notification and an untagged event are not passed on.

    Covers: R6.3.9, R6.3.11
    """
    fold = Delegated()
    fold.receive(ask("r1"))
    fold.receive(ask("r1"))  # re-shown by a second attach
    fold.receive(UiRequest(agent_id=CHILD, request_id="n1", kind="notify", message="fyi"))
    fold.receive(ask("r0", agent_id=None))
    fold.receive(resolved("never-shown"))
    fold.receive(resolved("r1"))
    fold.receive(resolved("r1"))
    got = fold.primary.take_ready()
    assert [(e.type, getattr(e, "request_id", None)) for e in got] == [
        ("permission_request", "r1"),
        ("permission_resolved", "r1"),
    ]
    assert fold.pending == {}


def test_after_a_reconnect_only_what_was_not_shown_again_is_closed():
    """Open before a reconnect: one re-sent (kept, not repeated), one not (closed for the consumer
    with the CLOSED_WHILE_AWAY source), a UI one not (closed with value null).

    Covers: R6.3.11
    """
    fold = Delegated()
    fold.receive(ask("kept"))
    fold.receive(ask("gone"))
    fold.receive(UiRequest(agent_id=CHILD, request_id="ui", kind="confirm"))
    assert len(fold.primary.take_ready()) == 3
    fold.reconnected()
    fold.receive(ask("kept"))
    assert fold.unsettled
    fold.settle()
    closed = fold.primary.take_ready()
    assert [(type(e), e.request_id) for e in closed] == [(PermissionResolved, "gone"), (UiResolved, "ui")]
    assert all(
        (e.model_extra or {}).get("source", getattr(e, "source", None)) == CLOSED_WHILE_AWAY for e in closed
    )
    assert list(fold.pending) == [(CHILD, "kept")]
    assert not fold.unsettled


# --- a real daemon ---------------------------------------------------------------------------------

GATED = [tool_step("touch", {"path": "made.txt"}), text_step("child finished")]  # asks before it writes
ASKING = [
    tool_step("ask", {"kind": "select", "title": "Which?", "options": ["red", "blue"]}),
    text_step("ok"),
]


async def _daemon(daemon_factory: Any, home: Path, child: list[dict[str, Any]]) -> Any:
    """The parent plays ``test/m`` (a looped "noted": a completion report may wake it), its child
    ``kid/m``."""
    return await daemon_factory(
        [text_step("noted")], loop=True, extra_toml=scripted_provider(home, "kid", child)
    )


async def _next(stream: Any, kind: type[AgentEvent]) -> Any:
    """The stream's next event, which must be a ``kind``."""
    event = await stream.next(30)
    assert isinstance(event, kind), event
    return event


async def _until(stream: Any, kind: type[AgentEvent]) -> Any:
    """The stream's next ``kind``, skipping the rest."""
    while not isinstance(event := await stream.next(30), kind):
        pass
    return event


@pytest.mark.parametrize("intent", ["allow", "deny"])
async def test_the_parents_client_answers_its_childs_request(
    daemon_factory: Any, home: Path, project: Path, intent: str
):
    """Only the parent has clients (two, interactive): the child's permission request comes through
    both clients' delegated stream under the child's agent_id; one answers it by choice_id, the
    child's tool runs (or is refused) accordingly, and both clients see it resolved.

    Covers: R6.3.8, R6.3.9, R6.3.10, R6.3.6
    """
    daemon = await _daemon(daemon_factory, home, GATED)
    async with (
        await ShardClient.connect_unix(home=daemon.home) as client,
        await ShardClient.connect_unix(home=daemon.home) as other,
    ):
        parent = await client.create_agent(project)
        assert parent.agent_id is not None
        await other.attach(parent.agent_id)
        job = await client.subagent_create(parent.agent_id, name="writer", task="make it", model="kid/m")
        child = job.runs[0].agent_id
        request = await _next(client.delegated_requests(), PermissionRequest)
        assert request.agent_id == child != parent.agent_id
        seen = await _next(other.delegated_requests(), PermissionRequest)
        assert seen.request_id == request.request_id
        assert list(client.delegated.pending) == [(child, request.request_id)]
        assert not (project / "made.txt").exists()
        await client.answer_delegated(request, choice_id=choice_for(request, intent))  # type: ignore[arg-type]
        for stream in (client.delegated_requests(), other.delegated_requests()):
            closed = await _next(stream, PermissionResolved)
            assert (closed.agent_id, closed.request_id) == (child, request.request_id)
            assert closed.choice_id == choice_for(request, intent)  # type: ignore[arg-type]
        done = await client.subagent_wait(parent.agent_id, [job.job_id], timeout=30)
        assert done.runs[0].state == "completed"
        assert (project / "made.txt").exists() is (intent == "allow")
        assert client.delegated.pending == other.delegated.pending == {}
        assert parent.pending == {}  # the child's request is not the parent's own


async def test_a_childs_ui_request_is_answered_with_a_value(daemon_factory: Any, home: Path, project: Path):
    """A child's select reaches the parent's client, which answers it with one of its options.

    Covers: R6.3.8, R6.3.9, R6.3.10, R6.3.7
    """
    daemon = await _daemon(daemon_factory, home, ASKING)
    async with await ShardClient.connect_unix(home=daemon.home) as client:
        parent = await client.create_agent(project)
        assert parent.agent_id is not None
        job = await client.subagent_create(parent.agent_id, name="asker", task="ask", model="kid/m")
        request = await _next(client.delegated_requests(), UiRequest)
        assert request.agent_id == job.runs[0].agent_id
        assert request.options == ["red", "blue"]
        await client.answer_delegated_ui(request, "blue")
        closed = await _next(client.delegated_requests(), UiResolved)
        assert closed.value == "blue"
        done = await client.subagent_wait(parent.agent_id, [job.job_id], timeout=30)
        assert done.runs[0].state == "completed"


class Gate:
    """An injected reconnect sleep that waits until the test opens it."""

    def __init__(self) -> None:
        self.open = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        await self.open.wait()


async def test_an_open_request_comes_back_once_after_a_reconnect(
    daemon_factory: Any, home: Path, project: Path
):
    """The parent's client drops with the child's request open; after the re-attach the daemon shows
    it again — not repeated on the stream — and the answer sent on the new connection is taken.
    A second request, answered elsewhere while the client was away, is closed for it.

    Covers: R6.3.11, R6.3.9, R6.3.10
    """
    daemon = await _daemon(daemon_factory, home, GATED)
    gate = Gate()
    async with (
        await ShardClient.connect_unix(home=daemon.home, sleep=gate, backoff=Backoff(first=0)) as client,
        await ShardClient.connect_unix(home=daemon.home) as other,
    ):
        parent = await client.create_agent(project)
        assert parent.agent_id is not None
        events = parent.subscribe()
        job = await client.subagent_create(parent.agent_id, name="writer", task="make it", model="kid/m")
        stream = client.delegated_requests()
        request = await _next(stream, PermissionRequest)
        client.drop()
        gate.open.set()
        await _until(events, Sync)  # the re-attach's sync: the daemon shows the request again after it
        await client.answer_delegated(request, choice_id=choice_for(request, "allow"))
        closed = await _next(stream, PermissionResolved)  # no second permission_request before it
        assert closed.request_id == request.request_id
        assert closed.source != CLOSED_WHILE_AWAY
        assert client.generation == 2
        done = await client.subagent_wait(parent.agent_id, [job.job_id], timeout=30)
        assert done.runs[0].state == "completed"
        assert (project / "made.txt").exists()

        # answered by another client of the parent while this one is away: closed on the re-attach
        await other.attach(parent.agent_id)
        again = await client.subagent_create(parent.agent_id, name="again", task="once more", model="kid/m")
        second = await _next(stream, PermissionRequest)
        assert second.agent_id == again.runs[0].agent_id
        gate.open.clear()
        client.drop()
        seen = other.delegated_requests()
        mine = await _next(seen, PermissionRequest)
        assert mine.request_id == second.request_id
        await other.answer_delegated(mine, choice_id=choice_for(mine, "deny"))
        await _next(seen, PermissionResolved)
        gate.open.set()
        gone = await _next(stream, PermissionResolved)
        assert (gone.request_id, gone.source) == (second.request_id, CLOSED_WHILE_AWAY)
        assert client.delegated.pending == {}


def test_a_resolution_that_comes_through_an_attached_child_closes_it_too():
    """The user attached the child itself after its request reached them as the parent's client: the
    resolution then comes on the child's own stream, and still closes the delegated request; the
    child's own requests no longer go to the delegated stream.

    Covers: R6.3.10, R6.3.6
    """

    async def unused(*args: Any) -> Any:
        raise AssertionError("nothing is sent in this test")

    client = ShardClient(unused)
    client._route(ask("r1"))
    child = client.agents[CHILD] = Agent(unused, CHILD)
    client._route(ask("r2"))
    client._route(resolved("r1"))
    assert [e.type for e in client.delegated_requests().take_ready()] == [
        "permission_request",
        "permission_resolved",
    ]
    assert client.delegated.pending == {}
    assert list(child.pending) == ["r2"]

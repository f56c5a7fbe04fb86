"""The terminal client's words and its remove key, with Textual's pilot against a real ``shard
daemon`` (issue 26 items 6 and 10): Delete removes an agent after a confirmation, terminate and kill
on a stopped agent say why there is nothing to do, the notifications say "Agent stopped" / "Agent
removed", and a permission answered here reads "… by this terminal" here and "… by terminal (pid N)"
to the other clients."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_helpers import SIZE, type_in, until

from shard.client import Backoff, ShardClient
from shard.protocol.events import PermissionResolved
from shard.testing.fake_daemon import AGENT, INFO, ok, sync
from shard.testing.fake_daemon import FakeDaemon as Peer
from shard.testing.home import text_step, tool_step
from shard.tui.view import terminal_name

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp


def notes(app: ShardApp) -> list[str]:
    """What the app notified, in order (its notify, recorded)."""
    said: list[str] = []
    shown = app.notify

    def record(message: str, **options: Any) -> None:
        said.append(message)
        shown(message, **options)

    app.notify = record  # type: ignore[method-assign]
    return said


async def highlight(pilot: Any, app: ShardApp, agent_id: str) -> None:
    from shard.tui.agents import AgentList

    listing = app.query_one(AgentList)
    await pilot.press("ctrl+a")
    await until(pilot, lambda: agent_id in listing._shown)
    listing.highlighted = [listing.get_option_at_index(i).id for i in range(listing.option_count)].index(
        agent_id
    )


async def test_delete_removes_an_agent_after_a_confirmation(daemon_factory, project: Path, client_factory):
    """Delete in the agent list asks first (n keeps it); y removes the highlighted agent — it
    leaves the list here and for every client, its session kept — and says "Agent removed". The
    open agent removed the same way leaves no conversation on screen.

    Covers: R12.4.1
    """
    from shard.tui.agents import AgentList
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation
    from shard.tui.sessions import RemoveConfirm

    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await client_factory(daemon.home)
    other_agent = await client.create_agent_id(project)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    said = notes(app)
    async with app.run_test(size=SIZE) as pilot, await ShardClient.connect_unix(home=daemon.home) as other:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await highlight(pilot, app, other_agent)
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, RemoveConfirm))
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, RemoveConfirm))
        assert other_agent in [a.agent_id for a in await other.list_agents()]

        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, RemoveConfirm))
        await pilot.press("y")
        await until(pilot, lambda: other_agent not in app.query_one(AgentList)._shown)
        assert other_agent not in app.roster.rows
        assert other_agent not in [a.agent_id for a in await other.list_agents()]
        assert "Agent removed" in said

        await highlight(pilot, app, agent_id)
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, RemoveConfirm))
        await pilot.press("y")
        await until(pilot, lambda: app.selected is None)
        assert app.query_one(Conversation).plain() == []
        assert await other.list_agents() == []


@contextlib.asynccontextmanager
async def stopped_agent(
    daemon_factory: Any, project: Path, client_factory: Any
) -> AsyncIterator[tuple[ShardApp, Any, list[str]]]:
    """The app on an agent of a real daemon that ctrl+t has stopped: (app, pilot, what it notified)."""
    from shard.tui.app import ShardApp

    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    said = notes(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.roster.rows[agent_id].runtime_state == "stopped")
        yield app, pilot, said


async def test_terminate_and_kill_on_a_stopped_agent_say_why_and_send_nothing(
    daemon_factory, project: Path, client_factory
):
    """ctrl+t says "Agent stopped"; once stopped, ctrl+t and F8 say the agent is stopped and what to
    do instead — F8 opens no confirmation and nothing is sent.

    Covers: R10.1.22, R10.1.23
    """
    from shard.tui.sessions import KillConfirm

    async with stopped_agent(daemon_factory, project, client_factory) as (app, pilot, said):
        assert said == ["Agent stopped"]
        await pilot.press("ctrl+t")
        await pilot.press("f8")
        await until(pilot, lambda: len(said) == 3)
        assert not isinstance(app.screen, KillConfirm)
        assert said[1:] == [
            "Agent is stopped: nothing to terminate. A prompt starts it again; Delete removes it.",
            "Agent is stopped: nothing to kill. A prompt starts it again; Delete removes it.",
        ]


async def test_a_picker_on_a_stopped_agent_starts_it_again_and_opens(
    daemon_factory, project: Path, client_factory
):
    """A catalog read never wakes a stopped runtime (the daemon answers CONFLICT): F2 on a stopped
    agent attaches it again, which restores it, and then opens the picker."""
    from shard.tui.pickers import Picker

    async with stopped_agent(daemon_factory, project, client_factory) as (app, pilot, said):
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, Picker))
        assert [name for name, _ in app.screen.entries] == ["build", "plan"]
        assert app.roster.rows[app.selected].runtime_state == "running"
        assert said == ["Agent stopped"]


async def test_a_permission_answered_here_reads_this_terminal_and_by_name_elsewhere(
    daemon_factory, project: Path
):
    """The terminal (named as ``shard attach`` names it) allows a request: the call's card says
    "Allowed by this terminal", and another client's resolution carries "terminal (pid N)".

    Covers: R6.3.6, R9.5.14
    """
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory([tool_step("touch", {"path": "made.txt"}), text_step("done")])
    name = terminal_name(os.getpid())
    client = await ShardClient.connect_unix(home=daemon.home, name=name, backoff=Backoff(first=0.05, cap=0.5))
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot, await ShardClient.connect_unix(home=daemon.home) as other:
        watcher = (await other.attach(agent_id, role="observer")).subscribe()
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "touch it", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        await pilot.press("y")
        resolved = await watcher.next(20)
        while not isinstance(resolved, PermissionResolved):
            resolved = await watcher.next(20)
        assert resolved.source_label == name
        await until(
            pilot, lambda: "Allowed by this terminal" in "\n".join(app.query_one(Conversation).plain())
        )
        watcher.close()
    await client.close()


async def test_no_remove_key_where_the_daemon_lacks_agent_remove(tmp_path: Path):
    """A daemon whose hello does not offer ``agent-remove`` (an older one) gets no Remove key: it is
    not in the footer and pressing Delete sends nothing.

    Covers: R7.8, R7.9
    """
    from shard.tui.app import ShardApp
    from shard.tui.sessions import RemoveConfirm

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [INFO]})]
        if command["type"] == "agent.attach":
            return [ok(command, {"status": "idle", "info": INFO}), sync()]
        return [ok(command)]

    async with Peer(tmp_path / "fake.sock", answer) as peer:
        client = await ShardClient.connect_unix(peer.path, home=tmp_path)
        app = ShardApp(client, agent_id=AGENT)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.views[AGENT].syncs == 1)
            assert not app.check_action("remove", ())
            await highlight(pilot, app, AGENT)
            await pilot.press("delete")
            await pilot.pause()
            assert not isinstance(app.screen, RemoveConfirm)
            assert "agent.remove" not in [c["type"] for c in peer.received]
        await client.close()

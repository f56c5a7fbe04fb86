"""The open agent's lifecycle keys driven with Textual's pilot against a real ``shard daemon`` on
scripted models: F5 opens a saved session or a fork of this one as a new agent, F8 kills after a
confirmation; and (against a fake daemon, for a window too long to script) F6 pages back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tui_helpers import SIZE, connect, type_in, until

from shard.client import ShardClient
from shard.protocol.events import Sync
from shard.testing import AgentProcess
from shard.testing.fake_daemon import AGENT, INFO, ok, sync
from shard.testing.fake_daemon import FakeDaemon as Peer
from shard.testing.home import text_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp
    from shard.tui.sessions import SessionsScreen


async def history(client: ShardClient, agent_id: str) -> list[tuple[str, str]]:
    """(role, text) of every message in the agent's live window, read from a fresh observer sync."""
    agent = await client.attach(agent_id, role="observer")
    try:
        first = agent.last_sync
        assert isinstance(first, Sync)
        messages = first.live_window.messages
        return [(m.role, "".join(getattr(b, "text", "") for b in m.content)) for m in messages]
    finally:
        await client.detach(agent_id)


async def session_of(client: ShardClient, agent_id: str) -> str | None:
    (info,) = await client.agent_status(agent_id)
    return info.session_id


async def stdio_session(home: Path, cwd: Path, message: str) -> str:
    """A session written by a plain ``shard agent --stdio`` (no daemon, so no agent adopted it)."""
    agent = await AgentProcess.start(home, cwd)
    try:
        _, first = await agent.handshake()
        await agent.send({"type": "prompt", "message": message})
        await agent.idle()
        assert await agent.finish() == 0
    finally:
        await agent.kill()
    return str(first["session_id"])


async def sessions(pilot: Any, app: ShardApp) -> SessionsScreen:
    from shard.tui.sessions import SessionsScreen

    await pilot.press("f5")
    await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
    assert isinstance(app.screen, SessionsScreen)
    return app.screen


async def choose(pilot: Any, screen: SessionsScreen, session_id: str) -> None:
    from textual.widgets import OptionList

    screen.query_one(OptionList).highlighted = [row.session_id for row in screen.rows].index(session_id)
    await pilot.press("enter")


async def talk(pilot: Any, app: ShardApp, agent_id: str, text: str, answer: str) -> None:
    from shard.tui.conversation import Conversation

    await until(pilot, lambda: agent_id in app.views and app.views[agent_id].syncs >= 1)
    await type_in(pilot, text, "enter")
    await until(pilot, lambda: f"agent {answer}" in app.query_one(Conversation).plain())
    await until(pilot, lambda: app.views[agent_id].status == "idle")


@pytest.mark.slow
async def test_f5_opens_a_saved_session_as_a_new_agent(daemon_factory, project: Path, client_factory):
    """F5 lists the folder's sessions (session_op list), the open agent's marked current; Enter on
    a session no agent holds (written by a plain ``shard agent --stdio``) sends agent.create {cwd,
    session_id}: a new agent runs on that old session, with its history, and the app opens it.
    Enter on a session another agent holds (the daemon lets one agent adopt a session) goes to that
    agent and creates nothing.

    Covers: R10.1.4, R9.2.43
    """
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation

    daemon = await daemon_factory([text_step("hi")], loop=True)
    old_session = await stdio_session(daemon.home, project, "from before")
    client = await client_factory(daemon.home)
    first = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=first)
    async with app.run_test(size=SIZE) as pilot, await connect(daemon.home) as other:
        await talk(pilot, app, first, "hello", "hi")
        first_session = await session_of(other, first)
        await until(pilot, lambda: first in app.roster.rows)
        assert app.roster.rows[first].session_id == first_session
        screen = await sessions(pilot, app)
        ids = [row.session_id for row in screen.rows]
        assert set(ids) == {old_session, first_session}
        assert screen.current == first_session
        await choose(pilot, screen, old_session)
        await until(pilot, lambda: app.selected not in (None, first))
        opened = app.selected
        assert opened is not None
        await until(pilot, lambda: app.views[opened].syncs == 1)
        assert await session_of(other, opened) == old_session
        assert await history(other, opened) == [("user", "from before"), ("assistant", "hi")]
        await until(pilot, lambda: "you from before" in app.query_one(Conversation).plain())
        await until(pilot, lambda: opened in app.roster.rows)
        await choose(pilot, await sessions(pilot, app), first_session)
        await until(pilot, lambda: app.selected == first)
        assert {a.agent_id for a in await other.list_agents()} == {first, opened}


@pytest.mark.slow
async def test_f5_f_forks_the_open_session_and_opens_the_fork(daemon_factory, project: Path, client_factory):
    """F5 then f: session_op fork at the last message, then agent.create on the fork. The fork is a
    new session whose history equals the parent's; the parent's session is unchanged.

    Covers: R9.2.60, R9.2.63, R10.1.4
    """
    from shard.tui.app import ShardApp

    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await client_factory(daemon.home)
    parent = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=parent)
    async with app.run_test(size=SIZE) as pilot, await connect(daemon.home) as other:
        await talk(pilot, app, parent, "first", "hi")
        await talk(pilot, app, parent, "second", "hi")
        await until(pilot, lambda: parent in app.roster.rows)
        await sessions(pilot, app)
        await pilot.press("f")
        await until(pilot, lambda: app.selected not in (None, parent))
        fork = app.selected
        assert fork is not None
        await until(pilot, lambda: app.views[fork].syncs == 1)
        parent_session, fork_session = await session_of(other, parent), await session_of(other, fork)
        assert fork_session is not None
        assert fork_session != parent_session
        parent_history = await history(other, parent)
        assert [text for _, text in parent_history] == ["first", "hi", "second", "hi"]
        assert await history(other, fork) == parent_history


async def test_f8_kills_the_open_agent_after_a_confirmation(daemon_factory, project: Path, client_factory):
    """F8 asks first: n keeps the runtime; F8 then y sends agent.kill and the runtime is gone (the
    agent and its session are kept).

    Covers: R10.1.25, R6.4.12
    """
    from shard.tui.app import ShardApp
    from shard.tui.sessions import KillConfirm

    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot, await connect(daemon.home) as other:
        await talk(pilot, app, agent_id, "hello", "hi")
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, KillConfirm))
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, KillConfirm))
        (info,) = await other.agent_status(agent_id)
        assert info.runtime_state == "running"
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, KillConfirm))
        await pilot.press("y")
        await until(pilot, lambda: app.roster.rows[agent_id].runtime_state != "running")
        (info,) = await other.agent_status(agent_id)
        assert info.runtime_state != "running"
        assert info.session_id is not None


def _user(index: int) -> dict[str, Any]:
    return {"id": f"u{index}", "role": "user", "content": [{"type": "text", "text": f"message {index}"}]}


@pytest.mark.long
async def test_f6_pages_back_through_a_long_window(tmp_path: Path):
    """700 messages: the pane shows the last 300 after a line saying 400 are left out; F6 shows 300
    more, F6 again the rest (no line then, and no F6 in the footer); a further F6 does nothing."""
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation

    window = {"messages": [_user(i) for i in range(700)]}

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        if command["type"] == "agent.list":
            return [ok(command, {"agents": [INFO]})]
        if command["type"] == "agent.attach":
            return [ok(command, {"status": "idle", "info": INFO}), sync(live_window=window)]
        return [ok(command)]

    async with Peer(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client, agent_id=AGENT)
        async with app.run_test(size=SIZE) as pilot:
            pane = app.query_one(Conversation)
            await until(pilot, lambda: app.views[AGENT].syncs == 1 and len(pane.plain()) == 301)
            assert pane.plain()[0].endswith("400 earlier entries not shown (F6 shows more)")
            assert pane.plain()[1] == "you message 400"
            assert app.check_action("earlier", ())
            await pilot.press("f6")
            await until(pilot, lambda: len(pane.plain()) == 601)
            assert pane.plain()[0].endswith("100 earlier entries not shown (F6 shows more)")
            assert pane.plain()[1] == "you message 100"
            assert pane.scroll_y == 0  # the earlier entries are what the reader asked to see
            await pilot.press("f6")
            await until(pilot, lambda: len(pane.plain()) == 700)
            assert pane.plain()[0] == "you message 0"
            assert pane.plain()[-1] == "you message 699"
            assert not app.check_action("earlier", ())  # F6 leaves the footer: nothing above
            await pilot.press("f6")
            await pilot.pause()
            assert len(pane.plain()) == 700
        await client.close()

"""The terminal client driven with Textual's pilot against a real ``shard daemon`` on scripted
models: what the screen shows for a streamed answer, a diff, a permission dialog answered here or
elsewhere, and a reconnect."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tui_helpers import SIZE, type_in, until

from shard.client import ShardClient, choice_for
from shard.protocol.events import PermissionRequest, PermissionResolved
from shard.testing.home import text_step, tool_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

EDIT = tool_step(
    "edit", {"path": "notes.txt", "edits": [{"old_text": "hello", "new_text": "bye"}]}, "Editing."
)


def shown(app: ShardApp) -> str:
    from shard.tui.conversation import Conversation

    return "\n".join(app.query_one(Conversation).plain())


async def test_a_prompt_shows_the_streamed_answer(daemon_factory, project: Path, client_factory):
    """Enter sends the prompt (idle: no streaming_behavior); the answer streams into one entry and
    the status returns to idle.

    Covers: R9.2.3, R6.4.4
    """
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation

    daemon = await daemon_factory([text_step("All good here, thanks for asking.", chunk=4)])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "how are things?", "enter")
        await until(pilot, lambda: "All good here, thanks for asking." in shown(app))
        await until(pilot, lambda: app.views[agent_id].status == "idle")
        lines = app.query_one(Conversation).plain()
        assert lines[0] == "you how are things?"
        assert lines[1] == "agent All good here, thanks for asking."
        assert sum("All good here" in line for line in lines) == 1
        assert app.views[agent_id].transcript.mismatches == []


async def test_a_permission_answered_here_then_the_diff_is_shown(
    daemon_factory, project: Path, client_factory
):
    """The edit asks; the dialog shows the server's prompt and choices, the choice's key answers with
    its choice_id; the tool card then shows the diff, removed and added lines coloured.

    Covers: R6.3.1, R6.3.6, R9.5.5, R9.5.8, R11.0.6
    """
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory([EDIT, text_step("Edited.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot, await ShardClient.connect_unix(home=daemon.home) as other:
        watcher = (await other.attach(agent_id, role="observer")).subscribe()
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "edit it", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        dialog = app.screen
        assert isinstance(dialog, PermissionDialog)
        choices = dialog.request.choices or []
        assert choices[0].label.lower().startswith("allow")
        await pilot.press("1")  # the first choice: allow once
        resolved = await watcher.next(20)
        while not isinstance(resolved, PermissionResolved):
            resolved = await watcher.next(20)
        assert resolved.choice_id == choices[0].id  # answered by choice_id, not a legacy decision
        watcher.close()
        await until(pilot, lambda: "Edited." in shown(app))
        assert (project / "notes.txt").read_text() == "bye\n"
        assert not isinstance(app.screen, PermissionDialog)
        text = next(t for t in app.query_one(Conversation).texts() if t.plain.startswith("⚙ edit"))
        plain = text.plain
        styles = {
            line: str(span.style)
            for line in ("-hello", "+bye")
            for span in text.spans
            if plain[span.start : span.end].startswith(line)
        }
        assert styles == {"-hello": "red", "+bye": "green"}


async def test_a_dialog_answered_by_another_client_goes_away(daemon_factory, project: Path, client_factory):
    """Another client (the SDK) answers first: permission_resolved closes the dialog here and says
    who answered; nothing is sent from this client.

    Covers: R6.3.1, R6.3.3, R6.3.6, R9.5.8
    """
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory([EDIT, text_step("Edited.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot, await ShardClient.connect_unix(home=daemon.home) as other:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        elsewhere = await other.attach(agent_id)
        asked = elsewhere.subscribe()
        await type_in(pilot, "edit it", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        request = await asked.next(20)
        while not isinstance(request, PermissionRequest):
            request = await asked.next(20)
        await elsewhere.answer_permission(request.request_id, choice_id=choice_for(request, "allow"))
        await until(pilot, lambda: not isinstance(app.screen, PermissionDialog))
        await until(pilot, lambda: "Edited." in shown(app))
        assert app.views[agent_id].resolved.get(request.request_id)
        assert request.request_id not in app._answered
        asked.close()


async def test_reconnect_resumes_without_duplicates(daemon_factory, project: Path, client_factory):
    """The connection drops mid-turn (a stalled stream): the status line says reconnecting, the SDK
    reconnects and re-attaches, and the fresh sync leaves each message and the streaming text once.

    Covers: R2.2.6, R2.2.8, R6.4.17, R6.4.18, R6.4.21
    """
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation

    stalled = {"blocks": [{"type": "text", "text": "Part one, then more…"}], "stall": True}
    daemon = await daemon_factory([text_step("First answer."), stalled])
    client = await client_factory(daemon.home, first=0.5)  # long enough to see the state
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id, poll=0.02)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "first", "enter")
        await until(pilot, lambda: "First answer." in shown(app) and app.views[agent_id].status == "idle")
        await type_in(pilot, "second", "enter")
        await until(pilot, lambda: "Part one, then more…" in shown(app))
        client.drop()
        await until(pilot, lambda: app.link == "reconnecting…")
        assert "reconnecting…" in str(app.query_one("#status").render())
        await until(pilot, lambda: app.views[agent_id].syncs == 2)
        await until(pilot, lambda: app.link == "connected")
        lines = app.query_one(Conversation).plain()
        for text in ("you first", "agent First answer.", "you second", "agent Part one, then more…▌"):
            assert lines.count(text) == 1, (text, lines)
        assert client.generation == 2
        await pilot.press("escape")  # abort the stalled turn
        await until(pilot, lambda: app.views[agent_id].status == "idle")


@pytest.mark.slow
async def test_a_ui_select_is_answered_and_esc_leaves_a_permission_open(
    daemon_factory, project, client_factory
):
    """A UI select shows the server's options and answers with the one picked (ui_resolved closes
    it); Esc on a permission dialog answers nothing — the request stays pending and ctrl+r reopens it.

    Covers: R6.3.2, R6.3.7, R9.5.19, R9.5.20, R9.5.21
    """
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog, UiDialog

    ask = tool_step("ask", {"kind": "select", "title": "Pick one", "options": ["red", "blue"]})
    daemon = await daemon_factory([ask, text_step("Picked."), EDIT, text_step("Edited.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "ask me", "enter")
        await until(pilot, lambda: isinstance(app.screen, UiDialog))
        await pilot.press("down", "enter")  # the second option
        await until(pilot, lambda: "Picked." in shown(app))
        assert '"answer": "blue"' in shown(app)
        await type_in(pilot, "edit it", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PermissionDialog))
        view = app.views[agent_id]
        assert len(view.pending) == 1
        assert view.status == "waiting_for_permission"
        assert "1 waiting for an answer" in view.headline(app.link)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        await pilot.press("3")  # deny
        await until(pilot, lambda: view.pending == {} and view.status == "idle")
        assert (project / "notes.txt").read_text() == "hello\n"


@pytest.mark.slow
async def test_a_permission_asked_before_a_drop_is_answered_after_it(daemon_factory, project, client_factory):
    """The link drops while the dialog is open: the dialog stays (the re-attach sync still carries the
    request, keyed by request_id: one dialog), and the answer given after the reconnect resolves it.

    Covers: R6.4.22, R6.4.25, R12.6.1
    """
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory([EDIT, text_step("Edited.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id, poll=0.02)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "edit it", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        dialog = app.screen
        client.drop()
        await until(pilot, lambda: app.views[agent_id].syncs == 2 and app.link == "connected")
        assert app.screen is dialog
        assert len(app.screen_stack) == 2
        await pilot.press("1")
        await until(pilot, lambda: "Edited." in shown(app))
        assert (project / "notes.txt").read_text() == "bye\n"


@pytest.mark.slow
async def test_the_list_creates_an_agent_and_switches_between_agents(
    daemon_factory, project, tmp_path, client_factory
):
    """Without AGENT the list shows every agent; ctrl+n and a directory create one there and open it;
    opening another agent from the list attaches it and detaches the first (one interactive
    attachment, the selected agent's); the list follows both agents' status. ctrl+t terminates the
    open (idle) agent: its row says stopped. q is a letter in the prompt box and quits from the list.

    Covers: R10.2.11, R10.2.13, R3.3, R3.8
    """
    from textual.widgets import Input

    from shard.tui.agents import AgentList
    from shard.tui.app import ShardApp

    other = tmp_path / "other"
    other.mkdir()
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await client_factory(daemon.home)
    first = await client.create_agent_id(project, name="first")
    app = ShardApp(client, cwd=str(other))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: first in app.roster.rows)
        assert app.selected is None
        await pilot.press("ctrl+n", "enter")  # the field holds the directory given as cwd
        await until(pilot, lambda: app.selected is not None and app.selected != first)
        created = app.selected
        await until(pilot, lambda: app.views[created].syncs == 1)
        assert app.roster.rows[created].cwd == str(other)
        assert set(client.agents) == {created}
        await pilot.press("ctrl+a")
        listing = app.query_one(AgentList)
        listing.highlighted = listing.get_option_index(first)
        await pilot.press("enter")
        await until(pilot, lambda: first in app.views and app.views[first].syncs == 1)
        assert set(client.agents) == {first}
        await type_in(pilot, "hello", "enter")
        await until(pilot, lambda: "agent hi" in shown(app))
        await until(pilot, lambda: app.views[first].status == "idle")
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.roster.rows[first].runtime_state == "stopped")
        await pilot.press("q")  # in the prompt box: a letter
        assert app.query_one("#prompt", Input).value == "q"
        assert app.is_running
        await pilot.press("ctrl+a", "q")  # in the list: quit
        await until(pilot, lambda: not app.is_running)


@pytest.mark.slow
async def test_a_daemon_restart_resumes_the_conversation_once(daemon_factory, project, client_factory):
    """The daemon stops and a new one starts on the same SHARD_HOME (a new socket): the SDK finds it
    through daemon.json, re-attaches, the agent is restored from its session, and the screen shows
    each message once.

    Covers: R2.2.6, R2.2.8, R6.4.17, R6.4.18, R6.4.20, R6.4.21
    """
    from shard.tui.app import ShardApp
    from shard.tui.conversation import Conversation

    daemon = await daemon_factory([text_step("Before the restart.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id, poll=0.02)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "hello", "enter")
        await until(
            pilot, lambda: "Before the restart." in shown(app) and app.views[agent_id].status == "idle"
        )
        before = app.query_one(Conversation).plain()
        await daemon.stop()
        await until(pilot, lambda: app.link == "reconnecting…")
        await daemon_factory(None)
        await until(pilot, lambda: app.views[agent_id].syncs == 2 and app.link == "connected", limit=30)
        after = app.query_one(Conversation).plain()
        assert after == before  # usage notices included: the view keeps them across the resync
        assert after.count("agent Before the restart.") == 1


async def test_an_editor_request_answers_with_the_edited_text(daemon_factory, project, client_factory):
    """An editor request opens with its prefill in a multi-line field; Enter is a newline there and
    ctrl+s answers with the text.

    Covers: R9.5.20, R9.5.21
    """
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import UiDialog

    ask = tool_step("ask", {"kind": "editor", "title": "Edit the note", "prefill": "line one"})
    daemon = await daemon_factory([ask, text_step("Thanks.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "note", "enter")
        await until(pilot, lambda: isinstance(app.screen, UiDialog))
        await type_in(pilot, "zero", "enter", "ctrl+s")
        await until(pilot, lambda: "Thanks." in shown(app))
        assert '"answer": "zero\\nline one"' in shown(app)

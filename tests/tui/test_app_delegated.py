"""A background child's requests in the terminal client (PROTOCOL §6.3), with Textual's pilot against
a real daemon: the parent (open in the app) plays ``test/m``, its child ``kid/m``, which asks before
it writes. Only the app's client — attached to the parent, never to the child — can answer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_helpers import SIZE, screen_text, until

from shard.client import ShardClient, choice_for
from shard.protocol.events import PermissionRequest, PermissionResolved
from shard.testing.home import scripted_provider, text_step, tool_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import RequestDialog

GATED = [tool_step("touch", {"path": "made.txt"}), text_step("child finished")]


async def _parent_and_app(daemon_factory: Any, home: Path, project: Path, client_factory: Any) -> Any:
    from shard.tui.app import ShardApp

    kid = scripted_provider(home, "kid", GATED)
    daemon = await daemon_factory([text_step("noted")], loop=True, extra_toml=kid)
    client = await client_factory(daemon.home)
    parent = await client.create_agent_id(project)
    return daemon, client, parent, ShardApp(client, agent_id=parent, poll=0.02)


def dialogs(app: ShardApp) -> list[RequestDialog]:
    from shard.tui.dialogs import RequestDialog

    return [s for s in app.screen_stack if isinstance(s, RequestDialog)]


async def test_a_childs_request_shows_in_the_parents_view_and_is_answered_there(
    daemon_factory, home: Path, project: Path, client_factory
):
    """The child's permission request opens a dialog in the parent's view saying which child asks
    (its name from the agent list, and its id); its key answers with the child's agent_id, and the
    child writes and completes.

    Covers: R6.3.8, R6.3.9, R6.3.10
    """
    from shard.tui.dialogs import PermissionDialog

    _daemon, client, parent, app = await _parent_and_app(daemon_factory, home, project, client_factory)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[parent].syncs == 1)
        job = await client.subagent_create(parent, name="writer", task="make it", model="kid/m")
        child = job.runs[0].agent_id
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        dialog = app.screen
        assert isinstance(dialog, PermissionDialog)
        assert dialog.request.agent_id == child
        label = app.roster.rows[child].label
        assert label != child  # the child's display name or alias
        assert dialog.asker == f"{label} ({child})"
        # the dialog is the screen before it is drawn: wait for its text (a loaded full run read "")
        await until(pilot, lambda: f"Asked by {label} ({child})" in screen_text(app))
        assert app.views[parent].pending == {}  # the parent's own view has nothing of its own
        assert not (project / "made.txt").exists()
        await pilot.press("1")  # allow once
        await until(pilot, lambda: not dialogs(app) and app.asks.pending == {})
        done = await client.subagent_wait(parent, [job.job_id], timeout=30)
        assert done.runs[0].state == "completed"
        assert (project / "made.txt").exists()
        assert "waiting for an answer" not in app._headline(app.views[parent])


async def test_a_childs_request_answered_by_another_client_is_dismissed(
    daemon_factory, home: Path, project: Path, client_factory
):
    """Another client of the parent (the SDK) answers the child's request first: the dialog here
    closes, says who answered, and this client sent nothing.

    Covers: R6.3.8, R6.3.10, R6.3.6
    """
    from shard.tui.dialogs import PermissionDialog

    daemon, client, parent, app = await _parent_and_app(daemon_factory, home, project, client_factory)
    async with app.run_test(size=SIZE) as pilot, await ShardClient.connect_unix(home=daemon.home) as other:
        await until(pilot, lambda: app.views[parent].syncs == 1)
        await other.attach(parent)
        job = await client.subagent_create(parent, name="writer", task="make it", model="kid/m")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        request = await other.delegated_requests().next(30)
        assert isinstance(request, PermissionRequest)
        await other.answer_delegated(request, choice_id=choice_for(request, "deny"))
        resolved = await other.delegated_requests().next(30)
        assert isinstance(resolved, PermissionResolved)
        await until(pilot, lambda: not dialogs(app))
        assert app.asks.resolved.get(request.request_id)
        assert request.request_id not in app._answered
        done = await client.subagent_wait(parent, [job.job_id], timeout=30)
        assert done.runs[0].state == "completed"
        assert not (project / "made.txt").exists()


async def test_a_childs_request_open_across_a_drop_is_answered_after_it(
    daemon_factory, home: Path, project: Path, client_factory
):
    """The link drops while the child's dialog is open: after the re-attach (a second sync of the
    parent) the daemon shows the request again, and there is still one dialog; answering it then
    lets the child go on.

    Covers: R6.3.11, R6.3.10
    """
    from shard.tui.dialogs import PermissionDialog

    _daemon, client, parent, app = await _parent_and_app(daemon_factory, home, project, client_factory)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[parent].syncs == 1)
        job = await client.subagent_create(parent, name="writer", task="make it", model="kid/m")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        client.drop()
        await until(pilot, lambda: app.views[parent].syncs == 2 and app.link == "connected")
        await pilot.pause()
        assert len(dialogs(app)) == 1
        assert len(app.asks.pending) == 1
        await pilot.press("1")
        await until(pilot, lambda: not dialogs(app) and app.asks.pending == {})
        done = await client.subagent_wait(parent, [job.job_id], timeout=30)
        assert done.runs[0].state == "completed"
        assert (project / "made.txt").exists()

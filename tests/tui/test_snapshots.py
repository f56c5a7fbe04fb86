"""Snapshots of the main screens as text (tests/tui/snapshots/*.txt): the agent list, a conversation
with a diff, a permission dialog. What varies between runs (agent ids, paths, token counts, times)
is made constant first; SHARD_UPDATE_SNAPSHOTS=1 rewrites the files after a deliberate change."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import SIZE, check_snapshot, screen_text, stable, until

from shard.testing.home import text_step, tool_step
from shard.tui.app import ShardApp
from shard.tui.conversation import Conversation
from shard.tui.dialogs import PermissionDialog

CHANGE = {"path": "notes.txt", "edits": [{"old_text": "hello", "new_text": "bye"}]}


def turns_done(app: ShardApp) -> int:
    return sum(line.startswith("turn done") for line in app.query_one(Conversation).plain())


@pytest.mark.slow
async def test_main_screens(daemon_factory, project: Path, client_factory):
    """Covers: R9.4.14, R11.0.6, R9.5.5, R10.2.15"""
    steps = [text_step("Ready when you are."), tool_step("edit", CHANGE, "Editing."), text_step("Edited.")]
    daemon = await daemon_factory(steps)
    client = await client_factory(daemon.home)
    await client.create_agent_id(project, name="demo")
    app = ShardApp(client, cwd="/work/project")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "demo" in screen_text(app))
        check_snapshot("agent_list", stable(screen_text(app), project))

        await pilot.press("enter")  # opens the highlighted agent
        await until(pilot, lambda: any(view.syncs == 1 for view in app.views.values()))
        agent_id = next(iter(app.views))
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: app.views[agent_id].status == "idle" and "Ready" in screen_text(app))
        await pilot.press(*"edit notes", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        await until(pilot, lambda: app.roster.rows[agent_id].activity == "waiting")  # the list's badge
        check_snapshot("permission_dialog", stable(screen_text(app), project))

        await pilot.press("1")
        await until(pilot, lambda: turns_done(app) == 2)
        check_snapshot("conversation", stable(screen_text(app), project))

"""The terminal client at 80 columns (issue 26 item 9): a permission dialog keeps every choice on
screen — Deny above all — however long the command or the diff, at 80x24 and at 160x45, and Deny
answers by its key. Against a real daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.widgets import Button
from tui_helpers import screen_text, until

from shard.testing.home import text_step, tool_step
from shard.tui.app import ShardApp
from shard.tui.dialogs import PermissionDialog

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]
# a pipeline of several programs: the "always allow commands like …" choice lists them all
LONG_COMMAND = (
    "git log --since='2 weeks ago' --pretty=format:'%h %an %s' --no-merges | grep -v 'chore' "
    "| sort -k2 | uniq -c | sort -rn | head -n 40 | cut -c1-120 | tr a-z A-Z"
)
LONG_CONTENT = "".join(f"line {n}: the new text of this line, long enough to matter\n" for n in range(60))
CALLS = {
    "bash": tool_step("bash", {"command": LONG_COMMAND}),
    "write": tool_step("write", {"path": "notes.txt", "content": LONG_CONTENT}),
}


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("call", ["bash", "write"])
async def test_every_choice_stays_on_screen_and_deny_answers_by_its_key(
    daemon_factory, project: Path, client_factory, size: tuple[int, int], call: str
):
    """A bash request with a long command, a write with a long diff: each choice's button lies
    wholly inside the screen and is what the screen shows at its place; the body scrolls instead
    of pushing them off; n (Deny's accelerator) denies, and the tool does not run.

    Covers: R6.3.6, R9.5.5
    """
    daemon = await daemon_factory([CALLS[call], text_step("Understood, I will not.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        await pilot.pause()
        dialog = app.screen
        screen = Region(0, 0, *size)
        buttons = list(dialog.query(Button))
        assert [str(b.label).split("] ")[-1] for b in buttons][-1] == "Deny"
        if call == "bash":
            assert any("Always allow commands like" in str(b.label) for b in buttons)
        for button in buttons:
            assert screen.contains_region(button.region), f"{button.label} at {button.region}"
            x, y = button.region.center
            assert dialog.get_widget_at(x, y)[0] is button  # nothing covers it
        assert "[n] Deny" in screen_text(app)
        if call == "write":  # the diff is longer than any of these screens: the body scrolls
            frame = dialog.query_one("#frame")
            assert frame.max_scroll_y > 0
            await pilot.press("pagedown")
            await until(pilot, lambda: frame.scroll_y > 0)
        await pilot.press("n")
        view = app.views[agent_id]
        await until(
            pilot, lambda: view.status == "idle" and any("Understood" in e.text for e in view.entries())
        )
        assert [card.is_error for card in view.cards.values()] == [True]
    assert (project / "notes.txt").read_text() == "hello\n"

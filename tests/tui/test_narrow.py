"""The terminal client at 80 columns (issue 26 item 9): a permission dialog keeps every choice on
screen — Deny above all — however long the command or the diff, at 80x24 and at 160x45, and Deny
answers by its key; the list and the status line name the model once, and the list puts the most
recently active agent first. Against a real daemon, and a fake one for the list's order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import connect, screen_text, type_in, until

from shard.testing.fake_daemon import INFO, FakeDaemon, ok
from shard.testing.home import text_step, tool_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py

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
    from textual.geometry import Region
    from textual.widgets import Button

    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory([CALLS[call], text_step("Understood, I will not.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "go", "enter")
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


async def test_the_model_shows_once_in_the_list_and_the_status_line(
    daemon_factory, project: Path, client_factory
):
    """An agent created on ``test/m`` (the registry says provider ``test``, model ``test/m``): the
    list's one line and the status line say ``test/m``, never ``test/test/m``.

    Covers: R11.0.19
    """
    from shard.tui.agents import AgentList
    from shard.tui.app import ShardApp

    daemon = await daemon_factory([text_step("Hi.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project, name="demo", model="test/m")
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        text = screen_text(app)
        assert "test/test/m" not in text
        assert "model test/m" in str(app.query_one("#status").render())
        listing = app.query_one(AgentList)
        assert str(listing.get_option_at_index(0).prompt).startswith("▶ demo · idle · test/m")


async def test_an_agent_on_the_default_model_names_it(daemon_factory, project: Path, client_factory):
    """Created without a model, the agent runs the configured default, which the registry does not
    name: once attached, its catalog's active model shows in the list and the status line.

    Covers: R9.1.10
    """
    from shard.tui.agents import AgentList
    from shard.tui.app import ShardApp

    daemon = await daemon_factory([text_step("Hi.")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project, name="demo")
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.roster.rows[agent_id].model == "test/m")
        assert "model test/m" in str(app.query_one("#status").render())
        listing = app.query_one(AgentList)
        assert str(listing.get_option_at_index(0).prompt) == "▶ demo · idle · test/m"


async def test_the_list_puts_the_most_recently_active_agent_first(tmp_path: Path):
    """Two agents, the newer first; activity on the older one moves it to the top, the highlight
    staying on the agent it was on; each agent is one line.

    Covers: R10.2.11, R10.2.20
    """
    from shard.tui.agents import AgentList
    from shard.tui.app import ShardApp

    older = {**INFO, "agent_id": "agent-old", "name": "older", "created_at": 100}
    newer = {**INFO, "agent_id": "agent-new", "name": "newer", "created_at": 200}

    def answer(command: dict[str, Any]) -> list[dict[str, Any]]:
        return [ok(command, {"agents": [older, newer]})] if command["type"] == "agent.list" else [ok(command)]

    async with FakeDaemon(tmp_path / "fake.sock", answer) as peer:
        client = await connect(tmp_path, path=peer.path)
        app = ShardApp(client)
        async with app.run_test(size=(80, 24)) as pilot:
            listing = app.query_one(AgentList)
            await until(pilot, lambda: listing.option_count == 2)
            assert [o.id for o in listing.options] == ["agent-new", "agent-old"]
            assert listing.highlighted_option is not None
            assert listing.highlighted_option.id == "agent-new"
            activity = {"type": "agent_activity", "agent_id": "agent-old", "timestamp": 300,
                        "phase": "thinking", "status": "streaming"}  # fmt: skip
            await peer.send(activity)
            await until(pilot, lambda: [o.id for o in listing.options] == ["agent-old", "agent-new"])
            assert listing.highlighted_option.id == "agent-new"
            assert "  older · thinking" in screen_text(app).splitlines()[1]
            assert "  newer · idle" in screen_text(app).splitlines()[2]
        await client.close()

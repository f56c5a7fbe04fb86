"""The queue in the terminal client, with Textual's pilot against a real ``shard daemon`` whose model
stalls: a follow-up and a steer sent mid-turn show above the prompt box; F7 takes the last one back
into the box; an abort hands the rest back into the box, after what is typed there."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui_helpers import SIZE, type_in, until

from shard.testing.home import recorded_requests, text_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

STALLED = {"blocks": [{"type": "text", "text": "working on it"}], "stall": True}


def queue_shown(app: ShardApp) -> str:
    from shard.tui.queue import QueueLine

    line = app.query_one(QueueLine)
    return str(line.render()) if line.display else ""


async def test_the_queue_shows_f7_takes_one_back_and_an_abort_refills_the_prompt_box(
    daemon_factory, project: Path, client_factory
):
    """Enter mid-turn queues a follow-up and ctrl+s a steer: both show, saying how they wait. F7
    withdraws the steer into the prompt box; with other text typed, Esc (abort) hands the follow-up
    back after that text. The model never got either.

    Covers: R9.2.4, R9.2.5, R9.2.7
    """
    from textual.widgets import Input

    from shard.tui.app import ShardApp
    from shard.tui.queue import QueueLine

    daemon = await daemon_factory([STALLED, text_step("unused")])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        view = lambda: app.views[agent_id]  # noqa: E731
        box = app.query_one("#prompt", Input)
        await until(pilot, lambda: view().syncs == 1)
        await type_in(pilot, "start", "enter")
        await until(pilot, lambda: view().status == "streaming" and bool(view().transcript.streaming))
        await type_in(pilot, "then the tests", "enter")
        await until(pilot, lambda: "then the tests" in queue_shown(app))
        await type_in(pilot, "also the port", "ctrl+s")
        await until(pilot, lambda: "also the port" in queue_shown(app))
        shown = queue_shown(app)
        assert "queued (after this turn) then the tests" in shown
        assert "queued (steer) also the port" in shown
        assert "F7 takes the last one back" in shown
        assert box.value == ""

        await pilot.press("f7")
        await until(pilot, lambda: "also the port" not in queue_shown(app))
        assert box.value == "also the port"

        box.value = "a new thought"
        await pilot.press("escape")
        await until(pilot, lambda: box.value == "a new thought then the tests")
        assert not app.query_one(QueueLine).display
        assert view().status == "idle"
    sent = str(recorded_requests(daemon.home))
    assert "then the tests" not in sent
    assert "also the port" not in sent

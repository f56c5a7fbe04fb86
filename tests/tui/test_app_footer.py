"""The footer is redrawn when a key comes or goes, not on every event: its redraw restyles every key,
and a streamed tool call sends hundreds of events (a 60-line write took 37 s of a core to reach its
permission dialog when each event redrew it). Counted, not timed."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import type_in, until

from shard.testing.home import text_step, tool_step

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py

CONTENT = "".join(f"line {n}: the new text of this line, long enough to matter\n" for n in range(60))


async def test_a_streamed_write_redraws_the_footer_only_when_its_keys_change(
    daemon_factory, project: Path, client_factory
):
    """A write of 60 lines, streamed: from the prompt to its permission dialog the footer is redrawn
    at most a few times, however many events came; the keys still follow the agent after."""
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory(
        [tool_step("write", {"path": "notes.txt", "content": CONTENT}), text_step("Not written.")]
    )
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    counts = {"refresh": 0, "footer": 0}
    refresh, redraw = app._refresh, app.refresh_bindings

    def counted_refresh(view):  # type: ignore[no-untyped-def]
        counts["refresh"] += 1
        refresh(view)

    def counted_redraw() -> None:
        counts["footer"] += 1
        redraw()

    app._refresh = counted_refresh  # type: ignore[method-assign]
    app.refresh_bindings = counted_redraw  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        before = dict(counts)
        await type_in(pilot, "go", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionDialog))
        events = counts["refresh"] - before["refresh"]
        redraws = counts["footer"] - before["footer"]
        assert events >= 20, counts  # the call streamed in many events
        assert redraws <= 3, counts  # busy on, and what came with it: not one per event
        await pilot.press("n")
        view = app.views[agent_id]
        await until(pilot, lambda: view.status == "idle")
        assert app.check_action("abort", ()) is True  # the keys still follow the agent

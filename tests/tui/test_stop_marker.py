"""A reply that ended early says so in the terminal client, live and after a re-attach: a muted
line under it — "Stopped by you" after Esc, "Interrupted", "Cut off: max tokens", "Failed: …"
(``Message.stop_reason``, issue 26 item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_helpers import SIZE, type_in, until

from shard.protocol.events import MessageComplete, Sync
from shard.tui.view import AgentView

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

A = "agent-1"


def shown(app: ShardApp) -> list[str]:
    from shard.tui.conversation import Conversation

    return app.query_one(Conversation).plain()


def _reply(mid: str, **stop: Any) -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "content": [{"type": "text", "text": "Half"}], **stop}


def test_each_reason_shows_its_marker_under_the_reply_and_a_completed_one_none():
    """The pure view: from a sync's window (a re-attach) and from message_complete (live) alike.

    Covers: R9.4.8, R9.1.4
    """
    view = AgentView(A)
    window = [
        _reply("m1", stop_reason="completed"),
        _reply("m2"),  # recorded before messages said why they ended: completed
        _reply("m3", stop_reason="interrupted"),
        _reply("m4", stop_reason="max_tokens"),
        _reply("m5", stop_reason="failed", stop_detail="HTTP 500 from the server"),
    ]
    view.apply(Sync.model_validate({"agent_id": A, "status": "idle", "mode": "build",
               "live_window": {"messages": window}, "pending_requests": []}))  # fmt: skip
    view.apply(MessageComplete.model_validate({"agent_id": A, "message_id": "m6",
               "message": _reply("m6", stop_reason="aborted")}))  # fmt: skip
    notes = [(e.key, e.text) for e in view.entries() if e.kind == "notice"]
    assert notes == [
        ("m3:stop", "⏹ Interrupted"),
        ("m4:stop", "⏹ Cut off: max tokens"),
        ("m5:stop", "⏹ Failed: HTTP 500 from the server"),
        ("m6:stop", "⏹ Stopped by you"),
    ]


async def test_esc_mid_reply_shows_stopped_by_you_live_and_after_a_reattach(
    daemon_factory, project: Path, client_factory
):
    """Esc while the reply streams: the partial reply stays, with "⏹ Stopped by you" right under it;
    a second terminal attaching afterwards shows the same from the ``sync`` it gets.

    Covers: R9.2.7, R9.4.8, R9.1.4
    """
    from shard.tui.app import ShardApp

    stalled = {"blocks": [{"type": "text", "text": "Part one, then more…"}], "stall": True}
    daemon = await daemon_factory([stalled])
    client = await client_factory(daemon.home)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "tell me", "enter")
        await until(pilot, lambda: "agent Part one, then more…▌" in shown(app))
        await pilot.press("escape")
        await until(pilot, lambda: "⏹ Stopped by you" in shown(app))
        lines = shown(app)
        assert lines[lines.index("agent Part one, then more…") + 1] == "⏹ Stopped by you"

    later = ShardApp(await client_factory(daemon.home), agent_id=agent_id)
    async with later.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: later.views[agent_id].syncs == 1)
        lines = shown(later)
        assert lines[lines.index("agent Part one, then more…") + 1] == "⏹ Stopped by you"

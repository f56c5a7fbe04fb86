"""The terminal client shows a turn the same after a re-attach as it did live (issue 26 item 5): the
write's diff, the bash call's exit code and duration, who answered each permission request and how,
the turn's usage — a second terminal attaching afterwards gets them from the ``sync`` window."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tui_helpers import SIZE, type_in, until

from shard.client import ShardClient
from shard.testing.home import text_step, tool_step
from shard.tui.view import terminal_name

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py
if TYPE_CHECKING:
    from shard.tui.app import ShardApp

STEPS = [
    tool_step("write", {"path": "plan.txt", "content": "step one\nstep two\n"}, "Writing the plan."),
    tool_step("bash", {"command": "echo ran; exit 2"}),
    text_step("Planned."),
]


def shown(app: ShardApp) -> list[str]:
    from shard.tui.conversation import Conversation

    return app.query_one(Conversation).plain()


async def test_a_turn_shows_the_same_cards_after_a_reattach(daemon_factory, project: Path, client_factory):
    """Covers: R6.4.20, R6.4.21, R9.4.2, R9.4.10, R9.4.14, R9.4.16, R9.5.14"""
    from shard.tui.app import ShardApp
    from shard.tui.dialogs import PermissionDialog

    daemon = await daemon_factory(STEPS)
    name = terminal_name(os.getpid())  # as shard attach names its connection
    client = await ShardClient.connect_unix(home=daemon.home, name=name)
    agent_id = await client.create_agent_id(project)
    app = ShardApp(client, agent_id=agent_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.views[agent_id].syncs == 1)
        await type_in(pilot, "plan it", "enter")
        answered: list[object] = []
        for _ in range(2):  # the write, then the bash call: allow once, by key
            await until(
                pilot, lambda: isinstance(app.screen, PermissionDialog) and app.screen not in answered
            )
            answered.append(app.screen)
            await pilot.press("1")
        await until(pilot, lambda: any(line.startswith("turn done") for line in shown(app)))
        live = shown(app)

    await client.close()

    later = ShardApp(await client_factory(daemon.home), agent_id=agent_id)
    async with later.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: later.views[agent_id].syncs == 1)
        # the same cards; who answered is said from the viewer's side: the other terminal by name
        assert shown(later) == [line.replace("by this terminal", f"by {name}") for line in live]

    text = "\n".join(live)
    assert "+step two" in text  # the write's diff
    assert text.count("Allowed by this terminal") == 2
    bash = next(card for card in live if card.startswith("⚙ bash"))
    assert bash.splitlines()[-1].startswith("exit 2 · ")  # exit code and duration
    assert live[-1].startswith("turn done · ")

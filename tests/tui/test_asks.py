"""The fold of background children's requests behind the terminal client (no Textual)."""

from __future__ import annotations

from tui_helpers import info

from shard.client import CLOSED_WHILE_AWAY
from shard.protocol.events import PermissionRequest, PermissionResolved, UiRequest, UiResolved
from shard.tui.asks import Asks
from shard.tui.roster import Roster

ROSTER = Roster.of(
    [
        info("root"),
        info("kid", parent_agent_id="root"),
        info("other"),
        info("stranger-kid", parent_agent_id="other"),
    ]
)


def ask(agent_id: str, request_id: str) -> PermissionRequest:
    return PermissionRequest(
        agent_id=agent_id, request_id=request_id, tool_name="touch", input={}, prompt="?", options=["deny"]
    )


def test_a_view_shows_its_descendants_requests_and_those_of_an_unknown_asker():
    """Covers: R6.3.8, R6.3.9"""
    asks = Asks()
    for event in (ask("kid", "r1"), ask("stranger-kid", "r2"), ask("not-listed-yet", "r3")):
        asks.apply(event)
    assert [r.request_id for r in asks.shown_in(ROSTER, "root")] == ["r1", "r3"]
    assert [r.request_id for r in asks.shown_in(ROSTER, "other")] == ["r2", "r3"]
    assert [r.request_id for r in asks.shown_in(ROSTER, "kid")] == ["r3"]


def test_a_resolution_closes_and_says_who_answered():
    """Covers: R6.3.6, R6.3.7, R6.3.11"""
    asks = Asks()
    asks.apply(ask("kid", "r1"))
    asks.apply(UiRequest(agent_id="kid", request_id="u1", kind="confirm"))
    asks.apply(ask("kid", "r2"))
    asks.apply(
        PermissionResolved(agent_id="kid", request_id="r1", decision="allow", source_label="Firefox on Linux")
    )
    asks.apply(UiResolved(agent_id="kid", request_id="u1", value="yes"))
    asks.apply(PermissionResolved(agent_id="kid", request_id="r2", decision="deny", source=CLOSED_WHILE_AWAY))
    asks.apply(PermissionResolved(agent_id="kid", request_id="never-asked", decision="deny"))
    assert asks.pending == {}
    assert asks.resolved["r1"] == "Allowed by Firefox on Linux"
    assert asks.resolved["u1"] == "Answered by another client: yes"
    assert "disconnected" in asks.resolved["r2"]
    assert "never-asked" not in asks.resolved

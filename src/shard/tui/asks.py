"""Requests of background children, as a pure fold of the SDK's delegated stream
(:meth:`~shard.client.ShardClient.delegated_requests`, PROTOCOL §6.3): a child with no client of
its own asks its nearest interactive ancestor's clients under its own ``agent_id``. The open agent's
view shows those whose asker descends from it, as the web client does. No Textual, no asyncio.

The SDK yields each request once (a re-shown one is not repeated) and closes for its consumer what
a reconnect found gone, so this fold needs no dedup of its own beyond keying by ``request_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shard.client.agent_state import PendingRequest
from shard.client.answers import resolution_text
from shard.protocol.events import AgentEvent, PermissionRequest, PermissionResolved, UiRequest, UiResolved
from shard.tui.roster import Roster
from shard.tui.view import ME, Resolution, nobody_here


@dataclass
class Asks:
    pending: dict[str, PendingRequest] = field(default_factory=dict)  # request_id -> the child's request
    resolved: dict[str, str] = field(default_factory=dict)  # request_id -> who answered, in words
    mine: Callable[[Resolution], bool] = field(default=nobody_here, repr=False, compare=False)

    def apply(self, event: AgentEvent) -> None:
        if isinstance(event, PermissionRequest | UiRequest):
            self.pending[event.request_id] = event
        elif isinstance(event, PermissionResolved | UiResolved):
            request = self.pending.pop(event.request_id, None)
            if request is not None:
                self.resolved[event.request_id] = resolution_text(
                    event, request, mine=self.mine(event), me=ME
                )

    def shown_in(self, roster: Roster, agent_id: str) -> list[PendingRequest]:
        """The requests the view of ``agent_id`` shows: its descendants' — and those of an asker the
        list does not know yet (the daemon sends a client only what its attachments' children ask)."""
        return [
            r
            for r in self.pending.values()
            if r.agent_id is not None
            and (roster.descends(r.agent_id, agent_id) or r.agent_id not in roster.rows)
        ]

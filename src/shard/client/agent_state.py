"""What a client knows of one agent: the one fold of its events into state, shared by the SDK's
:class:`~shard.client.Agent` and the terminal client's view (``shard.tui.view.AgentView``), which
both extend it with what only they keep.

``sync`` is authoritative: it replaces the status, mode, capabilities, runtime epoch, the pending
requests and the queue (and the model, when it names one), and the events after it change them one
at a time (PROTOCOL §6.4, §9.1). Capabilities come only from ``sync`` and ``model_changed`` (absent
there: unchanged, R10.2.4), never inferred from the protocol version (R9.1.10). The conversation is
the :class:`~shard.client.transcript.Transcript`, folded from the same events. Pure: no asyncio, no
I/O, so a test drives it with plain event objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shard.client.transcript import Transcript
from shard.protocol.agents import AgentStatus
from shard.protocol.events import (
    AgentEvent,
    ModeChanged,
    ModelChanged,
    PermissionRequest,
    PermissionResolved,
    ReasoningLevelChanged,
    Status,
    Sync,
    UiRequest,
    UiResolved,
    UsageEvent,
)
from shard.protocol.queue import QueueChanged, QueuedMessage

PendingRequest = PermissionRequest | UiRequest


@dataclass(eq=False)
class AgentState:
    agent_id: str | None
    status: AgentStatus | None = None
    # what the agent says it waits for while it holds ("retrying in 2.5 s: connection refused
    # (attempt 2 of 5)"); None when its status says nothing more
    status_detail: str | None = None
    mode: str | None = None
    model: str | None = None  # the active model's id, once a sync or model_changed named it
    context_window: int | None = None  # the active model's, in tokens, and where that came from
    context_window_source: str | None = None
    reasoning: str | None = None  # the active reasoning level, once one was changed
    capabilities: frozenset[str] | None = None
    runtime_epoch: int | None = None
    pending: dict[str, PendingRequest] = field(default_factory=dict)  # open requests by request_id
    queue: list[QueuedMessage] = field(default_factory=list)  # waiting to be delivered, in order
    transcript: Transcript = field(default_factory=Transcript)

    def apply(self, event: AgentEvent) -> None:
        """Fold one event of this agent's stream."""
        if isinstance(event, Sync):
            self.apply_sync(event)
        elif isinstance(event, Status):
            self.status = event.status
            self.status_detail = event.detail
        elif isinstance(event, ModeChanged):
            self.mode = event.mode
        elif isinstance(event, ModelChanged):
            self.model = event.active.id
            self.context_window = event.active.context_window
            self.context_window_source = event.active.context_window_source
            if event.capabilities is not None:  # absent: unchanged (R10.2.4)
                self.capabilities = frozenset(event.capabilities)
        elif isinstance(event, ReasoningLevelChanged):
            self.reasoning = event.active
        elif isinstance(event, PermissionRequest | UiRequest):
            self.pending[event.request_id] = event
        elif isinstance(event, PermissionResolved | UiResolved):
            self.pending.pop(event.request_id, None)
        elif isinstance(event, QueueChanged):
            self.queue = list(event.queue)  # the whole queue: nothing to merge, nothing to miss
        elif isinstance(event, UsageEvent) and event.context_window:
            self.context_window = event.context_window
            self.context_window_source = event.context_window_source
        self.transcript.apply(event)

    def apply_sync(self, sync: Sync) -> None:
        self.status = sync.status
        self.status_detail = sync.status_detail
        self.mode = sync.mode
        self.runtime_epoch = sync.runtime_epoch
        # no capabilities: no controls, never inferred from the protocol version (R9.1.10)
        self.capabilities = frozenset(sync.capabilities) if sync.capabilities is not None else None
        if sync.model is not None:
            self.model = sync.model.id
            if sync.model.context_window:  # a sync that does not say keeps what was learnt
                self.context_window = sync.model.context_window
                self.context_window_source = sync.model.context_window_source
        self.pending = {r.request_id: r for r in sync.pending_requests}
        self.queue = list(sync.queue or [])

    def supports(self, capability: str) -> bool:
        return self.capabilities is not None and capability in self.capabilities

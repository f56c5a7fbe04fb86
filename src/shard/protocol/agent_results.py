"""The ``data`` of the successful responses one agent's runtime sends: to its per-agent commands
(PROTOCOL §9.2) and to the daemon-internal ``runtime.steer`` (DESIGN §2). Kept apart from the
orchestrator's results so that a runtime builds only the models it answers with;
``shard.protocol.results`` re-exports every name here with the rest."""

from typing import Annotated, Literal

from pydantic import Field

from shard.protocol.agents import ModeDescriptor, ModelDescriptor, ReasoningLevel
from shard.protocol.base import WireModel
from shard.protocol.queue import QueuedMessage

NextProviderCall = Literal["next_provider_call"]


class QueuedResult(WireModel):
    """A ``prompt`` / ``steer`` that was queued rather than started a turn: the queued message."""

    queued: QueuedMessage


class UnqueueResult(WireModel):
    """The message ``unqueue`` withdrew: it will never be delivered."""

    withdrawn: QueuedMessage


class SetModeResult(WireModel):
    previous_mode: str
    mode: str


class ListModesResult(WireModel):
    modes: list[ModeDescriptor]
    active: str


class ListModelsResult(WireModel):
    models: list[ModelDescriptor]
    active: ModelDescriptor | None


class SetModelResult(WireModel):
    previous: ModelDescriptor | None
    active: ModelDescriptor
    effective: NextProviderCall = "next_provider_call"


class ListReasoningLevelsResult(WireModel):
    model: ModelDescriptor
    levels: list[ReasoningLevel]
    active: str
    effective: NextProviderCall = "next_provider_call"


class SetReasoningLevelResult(WireModel):
    model: ModelDescriptor
    previous: str
    active: str
    effective: NextProviderCall = "next_provider_call"


class CompactResult(WireModel):
    compacted: Literal[True] = True
    index: int
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: str
    message_range: Annotated[list[str], Field(min_length=2, max_length=2)]


class CompactNoop(WireModel):
    compacted: Literal[False] = False
    reason: Literal["no_safe_cut"] = "no_safe_cut"


class ForkResult(WireModel):
    fork_id: str
    session_id: str
    head_entry_id: str


class SessionForkInfo(WireModel):
    session_id: str
    source_session_id: str
    source_entry_id: str
    created: int | float


class SessionSummary(WireModel):
    session_id: str
    title: str | None = None
    created: int | float
    updated: int | float
    message_count: int
    forks: list[SessionForkInfo] | None = None
    source_session_id: str | None = None


class SessionListResult(WireModel):
    sessions: list[SessionSummary]


class RuntimeSteerResult(WireModel):
    """The answer to the daemon-internal ``runtime.steer`` (DESIGN §2)."""

    status: Literal["injected", "conflict"]
    turn_id: str | None = None

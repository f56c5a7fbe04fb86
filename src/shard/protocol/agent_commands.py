"""The commands one agent's runtime reads: per-agent (PROTOCOL §9.2, §9.5) and the daemon-internal
ones the daemon sends its runtimes (DESIGN §2).

Kept apart from the orchestrator's commands (``commands.py``, ``daemon_commands.py``) so that a
runtime builds only the models it parses; ``shard.protocol.commands`` re-exports every name here with
the rest of the catalog.
"""

from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, StrictInt, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from shard.protocol.base import WireModel
from shard.protocol.command_base import CommandBase as CommandBase
from shard.protocol.command_base import by_type
from shard.protocol.content import Image
from shard.protocol.permissions import Decision


class AgentCommand(CommandBase):
    """A per-agent command: ``agent_id`` routes it on a daemon connection, absent on a direct one."""

    agent_id: str | None = None


# --- §9.2 drive commands ------------------------------------------------------------------------


class Prompt(AgentCommand):
    type: Literal["prompt"] = "prompt"
    message: str
    images: list[Image] | None = None
    streaming_behavior: Literal["steer", "follow_up"] | None = None


class Steer(AgentCommand):
    type: Literal["steer"] = "steer"
    message: str
    images: list[Image] | None = None


class Abort(AgentCommand):
    type: Literal["abort"] = "abort"


class Unqueue(AgentCommand):
    """Withdraw a queued message before it is delivered (Shard, additive: ``queue.py``)."""

    type: Literal["unqueue"] = "unqueue"
    queue_id: str


class SessionActivate(AgentCommand):
    """PROTOCOL §9.2 fork's ``session.activate`` (named there, defined here, additive): a session of
    the agent's folder, picked from a refreshed ``session_op list``, gets an agent of its own. The
    daemon answers it (``orchestrator.py``); a runtime alone refuses it."""

    type: Literal["session.activate"] = "session.activate"
    session_id: Annotated[str, Field(min_length=1)]


class SetMode(AgentCommand):
    type: Literal["set_mode"] = "set_mode"
    mode: str


class ListModes(AgentCommand):
    type: Literal["list_modes"] = "list_modes"


class ListModels(AgentCommand):
    type: Literal["list_models"] = "list_models"


class SetModel(AgentCommand):
    type: Literal["set_model"] = "set_model"
    model: str


class ListReasoningLevels(AgentCommand):
    type: Literal["list_reasoning_levels"] = "list_reasoning_levels"


class SetReasoningLevel(AgentCommand):
    type: Literal["set_reasoning_level"] = "set_reasoning_level"
    model: str
    effort: str


class CompactArgs(WireModel):
    keep_recent_tokens: Annotated[StrictInt, Field(gt=0)] | None = None


class ForkArgs(WireModel):
    from_entry_id: Annotated[str, Field(min_length=1)]


class SessionListArgs(WireModel):
    pass


_SESSION_OP_ARGS: dict[str, type[WireModel]] = {
    "list": SessionListArgs,
    "compact": CompactArgs,
    "fork": ForkArgs,
}


class SessionOp(AgentCommand):
    """``session_op {op, args?}``; ``args`` is checked against the op's own shape."""

    type: Literal["session_op"] = "session_op"
    op: Literal["list", "compact", "fork"]
    args: dict[str, Any] | None = None
    _typed_args: WireModel = PrivateAttr()

    @model_validator(mode="after")
    def _check_args(self) -> "SessionOp":
        try:
            self._typed_args = _SESSION_OP_ARGS[self.op].model_validate(self.args or {})
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in ("args", *first["loc"]))
            raise PydanticCustomError(
                "session_op_args",
                "field '{loc}' of op '{op}': {msg}",
                {"loc": loc, "op": self.op, "msg": first["msg"]},
            ) from None
        return self

    @property
    def typed_args(self) -> WireModel:
        """``args`` validated as ``CompactArgs`` / ``ForkArgs`` / ``SessionListArgs``."""
        return self._typed_args


# --- §9.5 permission and UI answers -------------------------------------------------------------


class PermissionResponse(AgentCommand):
    """Exactly one of ``choice_id`` or ``decision`` (R9.5.6)."""

    type: Literal["permission_response"] = "permission_response"
    request_id: str
    choice_id: str | None = None
    decision: Decision | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "PermissionResponse":
        has_choice = "choice_id" in self.model_fields_set
        has_decision = "decision" in self.model_fields_set
        if has_choice == has_decision:
            raise ValueError("exactly one of 'choice_id' or 'decision' is required")
        if has_choice and not self.choice_id:
            raise ValueError("'choice_id' must be a non-empty string")
        if has_decision and self.decision is None:
            raise ValueError("'decision' must be one of allow, allow_always, deny")
        return self


class UiResponse(AgentCommand):
    type: Literal["ui_response"] = "ui_response"
    request_id: str
    value: str | list[str] | None


# --- daemon-internal commands (DESIGN §2): daemon → runtime only, never accepted from clients -------


class RuntimeSync(AgentCommand):
    """Ask the runtime for an authoritative sync snapshot; answered by a ``response`` whose ``data``
    is the ``sync`` event (the daemon adds ``agent_id`` and ``runtime_epoch`` for its clients)."""

    type: Literal["runtime.sync"] = "runtime.sync"


class RuntimeResponders(AgentCommand):
    """Tell the runtime whether any interactive client can answer its requests (the daemon tracks
    attachments, including ancestors' for a delegated child); without one the headless policy applies."""

    type: Literal["runtime.responders"] = "runtime.responders"
    present: bool


class RuntimeSteer(AgentCommand):
    """A strict steer for the running turn: answered ``injected`` once it drains, else ``conflict``."""

    type: Literal["runtime.steer"] = "runtime.steer"
    message: str


PerAgentCommand = Annotated[
    Prompt
    | Steer
    | Abort
    | Unqueue
    | SetMode
    | ListModes
    | ListModels
    | SetModel
    | ListReasoningLevels
    | SetReasoningLevel
    | SessionOp
    | SessionActivate
    | PermissionResponse
    | UiResponse,
    Field(discriminator="type"),
]

PER_AGENT_COMMANDS: dict[str, type[CommandBase]] = by_type(
    Prompt,
    Steer,
    Abort,
    Unqueue,
    SetMode,
    ListModes,
    ListModels,
    SetModel,
    ListReasoningLevels,
    SetReasoningLevel,
    SessionOp,
    SessionActivate,
    PermissionResponse,
    UiResponse,
)

RUNTIME_COMMANDS: dict[str, type[CommandBase]] = by_type(RuntimeSync, RuntimeResponders, RuntimeSteer)

"""The broker's vocabulary with its shell: the handles it gives out (:class:`Client`,
:class:`Generation`) and the effects it returns for the shell to perform.

The broker never touches a socket, a process or a timer. Each of its inputs returns a list of
effects in the order they must happen; the shell (``core.py``) performs them, and the testing kit
(``shard.testing.broker``) performs them in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from shard.daemon.lifecycle import Role
from shard.daemon.record import AgentRecord
from shard.protocol.agents import AgentStatus

if TYPE_CHECKING:
    from shard.daemon.catalog import Catalog


@dataclass(eq=False, slots=True)
class Client:
    """A client connection as the broker sees it. Compared by identity."""

    number: int
    transport: str
    # What a person knows this connection as (``permission_resolved.source_label``): the browser
    # of its enrollment, the local process, or the name it gave with ``client.identify``.
    label: str = ""
    attached: dict[str, Role] = field(default_factory=dict)  # agent_id -> role
    closed: bool = False
    # One of its commands is not complete yet (a runtime is starting, a sync is on its way): the
    # shell reads nothing more from it until :class:`Resume`, so its commands are handled in order.
    waiting: bool = False

    @property
    def source(self) -> str:
        """How an answer forwarded from this client is attributed (``permission_response.source``)."""
        return f"{self.transport}-client-{self.number}"

    @property
    def shown(self) -> str:
        """Its label, or words for its transport when the shell knew none."""
        return self.label or ("a web client" if self.transport == "websocket" else "a local client")


@dataclass(eq=False, slots=True)
class Generation:
    """One runtime process of an agent, from spawn to exit: its output and its exit come back to the
    broker with this token, so nothing from a superseded process is taken for the current one's."""

    agent_id: str
    stop_requested: bool = False  # the daemon asked it to end: its exit is no crash


@dataclass(frozen=True, slots=True)
class Send:
    """One encoded message to each of ``to`` (one object for a whole fan-out)."""

    to: tuple[Client, ...]
    data: bytes


@dataclass(frozen=True, slots=True)
class Broadcast:
    """One encoded message to every connection, attached or not (orchestrator events)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class ToRuntime:
    """One JSONL command (no newline) to a runtime's stdin."""

    gen: Generation
    data: bytes


@dataclass(frozen=True, slots=True)
class SpawnRuntime:
    """Start a process for ``gen``; report ``runtime_ready`` or ``runtime_failed``. ``overrides``:
    pass the record's model and mode to a session that already exists (an adoption's first start)."""

    gen: Generation
    record: AgentRecord
    overrides: bool


@dataclass(frozen=True, slots=True)
class StopRuntime:
    """Close its stdin: it finishes its work and exits (escalating to signals after a grace).

    ``now`` (Ctrl-C on the daemon): also tell the runtime process to stop its work now (SIGTERM to
    it alone: it aborts its turn, saves the session and exits); the broker kills it if it has not
    exited after a grace."""

    gen: Generation
    now: bool = False


@dataclass(frozen=True, slots=True)
class KillRuntime:
    """Signal its process group: SIGKILL with ``force``, else SIGTERM."""

    gen: Generation
    force: bool


@dataclass(frozen=True, slots=True)
class TimerKey:
    """Names a timer. Each part of the broker keys its timers with its own subclasses, so a timer
    comes back as the value that armed it (compared by type and fields), not a string to parse."""


@dataclass(frozen=True, slots=True)
class StartTimer:
    """Call ``Broker.timer(key)`` after ``delay`` seconds, replacing a timer of the same key."""

    key: TimerKey
    delay: float


@dataclass(frozen=True, slots=True)
class CancelTimer:
    key: TimerKey


@dataclass(frozen=True, slots=True)
class Remember:
    """Update the agent's registry row; a failed write is said on stderr, nothing else changes
    (the session stays the authority)."""

    agent_id: str
    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Resume:
    """The client's waiting command is complete: read its next one."""

    client: Client


@dataclass(frozen=True, slots=True)
class Log:
    """One line for the daemon's stderr."""

    text: str


@dataclass(frozen=True, slots=True)
class Offload:
    """Blocking work (git) for a worker thread, so the daemon keeps serving meanwhile. Its outcome —
    the result, or the exception it raised — comes back as ``Broker.offloaded(then, outcome)``."""

    call: Callable[[], Any]
    then: Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class Stopped:
    """The shutdown is complete (every runtime has exited): close the connections and exit."""


Effect = (
    Send
    | Broadcast
    | ToRuntime
    | SpawnRuntime
    | StopRuntime
    | KillRuntime
    | StartTimer
    | CancelTimer
    | Remember
    | Resume
    | Log
    | Offload
    | Stopped
)


class Outbox:
    """Where the broker's parts put effects while they handle one input; the broker hands them over
    in order when the input is done."""

    __slots__ = ("effects",)

    def __init__(self) -> None:
        self.effects: list[Effect] = []

    def add(self, effect: Effect) -> None:
        self.effects.append(effect)

    def take(self) -> list[Effect]:
        out, self.effects = self.effects, []
        return out


class Subscriber(Protocol):
    """Something inside the daemon that receives an agent's events without being a client: it is
    never an attachment and never a responder (R6.3.13). A ``message_delta`` reaches it as a summary
    ``{type, kind}``: the daemon never decodes a delta."""

    def event(self, agent_id: str, status: AgentStatus, event: Mapping[str, Any]) -> Iterable[Effect]: ...


class AgentManifests(Protocol):
    """The durable half of the agents, answered before the broker goes on (a refusal is the
    command's answer): the registry's rows and the session files. ``core.py`` has the real one,
    ``shard.testing.broker`` one in memory; jobs and workspaces have their own parts
    (``jobs/store.py``, ``workspaces/store.py``)."""

    def canonical_cwd(self, cwd: str) -> str:
        """The absolute, canonical directory, or INVALID_REQUEST."""

    def check_adoption(self, session_id: str, cwd: str) -> None:
        """INVALID_REQUEST (already adopted, another directory), NOT_FOUND or SESSION_CORRUPT."""

    def check_unadopted(self, session_id: str) -> None:
        """INVALID_REQUEST when an agent already holds the session (one kept on another host, which
        only its runtime can open)."""

    def add(self, record: AgentRecord) -> None:
        """Write the agent's row (INTERNAL_ERROR when the disk refuses)."""

    def remove(self, agent_id: str) -> None:
        """Delete the agent's row (INTERNAL_ERROR when the disk refuses)."""

    def catalog(self) -> Catalog | None:
        """The models, modes and tools a new agent may name (config.toml as it is now); None: not
        known, nothing is checked."""

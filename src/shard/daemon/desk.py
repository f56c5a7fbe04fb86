"""The desk: the one port the daemon's departments use (DESIGN §2), and what they answer back.

The departments are the orchestrator of ``agent.*`` (``orchestrator.py``, with ``removal.py``), the
subagent jobs (``jobs/``: coordinator, delivery, waits, steering) and the workspaces
(``workspaces/``). Each is given a :class:`Desk`, never the broker: it reads the agents, admits and
forgets them, talks to clients, asks runtimes with typed commands, starts and stops them, and reads
the clock and the agents' manifests. Nothing else the broker holds is a department's business, so
no department imports ``broker.py``, and a test can hand one a small fake desk. The broker
implements the desk, as it gives the :class:`~shard.daemon.supervisor.Supervisor` only what it uses.

The broker in turn tells every department the same things through :class:`Department` (the daemon
serving, a connection gone, a runtime exited, a per-agent command about to be routed, a timer,
agents being removed), one loop instead of naming a department at each input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from shard.daemon.effects import AgentManifests, Client, Effect, Generation, TimerKey
from shard.daemon.lifecycle import Role
from shard.daemon.record import AgentRecord
from shard.daemon.slot import AgentSlot, Answer, Started
from shard.protocol import commands as cmd
from shard.protocol.command_base import CommandBase
from shard.protocol.errors import ShardError

Answered = Callable[[Answer], None]  # who takes a runtime's answer to the daemon's own command


class Desk(Protocol):
    """What every department may ask of the broker."""

    # --- the agents -----------------------------------------------------------------------------

    @property
    def agents(self) -> Mapping[str, AgentSlot]:
        """Every agent by id: read here, changed only by :meth:`admit` and :meth:`forget`."""

    def slot(self, agent_id: str) -> AgentSlot:
        """The agent, or NOT_FOUND."""

    def admit(self, record: AgentRecord, *, adoption_overrides: bool = False) -> AgentSlot:
        """The one way an agent enters: its row is written (by the caller, in whatever transaction
        goes with it); it joins the agents and every connection is told (``agent_spawned``)."""

    def forget(self, slot: AgentSlot) -> None:
        """Take an agent with nothing running out of the registry (its session file stays); told to
        every connection. The disk first: a refusal (INTERNAL_ERROR) changes nothing."""

    # --- clients --------------------------------------------------------------------------------

    def send(self, client: Client, data: bytes) -> None: ...

    def broadcast(self, data: bytes) -> None:
        """To every connection, attached or not."""

    def resume(self, client: Client) -> None:
        """The client's waiting command is complete: its next one is read."""

    def step(self, client: Client, command: CommandBase, work: Callable[[], None]) -> bool:
        """Run part of ``command``'s handling; a failure answers the command (False)."""

    def emit(self, effect: Effect) -> None:
        """Any other effect: a timer, a log line, blocking work, one message to several clients."""

    # --- runtimes -------------------------------------------------------------------------------

    def ask(self, slot: AgentSlot, command: cmd.AgentCommand, then: Answered | None = None) -> None:
        """Send the daemon's own command to the agent's live runtime; ``then`` gets the answer (a
        failed one when there is no live runtime or it exits first)."""

    def ensure_running(self, slot: AgentSlot, then: Started) -> None:
        """``then(None)`` once the runtime is ready, ``then(error)`` if its start fails; raises
        RUNTIME_START_FAILED when the runtime limit leaves no room, CONFLICT while it is removed."""

    def stop(self, slot: AgentSlot) -> Generation | None:
        """Close the live runtime's stdin; the generation to wait for, None if none."""

    def kill(self, slot: AgentSlot, *, force: bool) -> Generation | None:
        """Signal the runtime process; the generation to wait for, None if none."""

    @property
    def shutting_down(self) -> bool:
        """The daemon is going down: nothing new starts."""

    # --- the rest -------------------------------------------------------------------------------

    def now(self) -> float:
        """The wall clock (seconds since the epoch), for records."""

    @property
    def manifests(self) -> AgentManifests:
        """The agents' durable half: rows, canonical directories, the catalog."""

    @property
    def fallback_model(self) -> str | None:
        """A new agent's model when neither it nor the configuration names one."""


class OrchestratorDesk(Desk, Protocol):
    """The orchestrator's desk: attachments and the stops of ``agent.remove`` besides."""

    def attach(self, client: Client, slot: AgentSlot, role: Role) -> None:
        """``client`` joins the agent's fan-out; the runtime is told if its responders changed."""

    def detach(self, client: Client, agent_id: str) -> None: ...

    def stop_now(self, slot: AgentSlot, grace: float) -> None:
        """SIGTERM the runtime now, SIGKILL after ``grace`` seconds if it is still there."""

    def cancel_start(self, slot: AgentSlot, error: ShardError) -> None:
        """Drop a start admitted but not spawned yet; its waiters get ``error``."""

    def removing(self, agent_ids: Sequence[str]) -> None:
        """These agents are being removed: every department lets go of them."""


class Department(Protocol):
    """What the broker tells every department, in turn. A department subclasses this; each default
    takes no part."""

    def startup(self) -> None:
        """The daemon serves now (work a previous daemon left may be taken up)."""
        return None

    def disconnected(self, client: Client) -> None:
        """A connection closed."""
        return None

    def child_exited(self, agent_id: str) -> None:
        """The agent's runtime exited (its forwarded commands were answered already)."""
        return None

    def guard(self, client: Client, slot: AgentSlot, command: cmd.AgentCommand) -> bool:
        """Before a per-agent command goes to its runtime: True when it was handled here; raises
        when it is refused."""
        return False

    def timer(self, key: TimerKey) -> None:
        """A timer fired; a department acts on its own keys only."""
        return None

    def removing(self, agent_ids: Sequence[str]) -> None:
        """``agent.remove`` takes these agents: a department lets go of their work."""
        return None

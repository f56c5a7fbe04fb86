"""Runtime generations, sans-I/O (PROTOCOL §6.4, §9.1; DESIGN §2, §6): when a runtime starts, stops,
is reaped or makes room, and what each start, exit and timer changes.

* **Starts** are coalesced: the first caller admits the start under the runtime limit (``limits.admit``
  decides, and picks the inactive runtime idle longest to stop first), later callers wait for the same
  one. A start is spawned once the agent's previous process has exited and fewer than
  ``max_runtimes`` processes exist (starting and exiting ones count), so the limit holds for real
  processes. ``runtime_epoch`` is 0 for the first generation and +1 for each replacement.
* **Stops**: ``begin_stop`` closes stdin (``stopping``; the runtime finishes its work), ``kill``
  signals. An exit the daemon did not ask for is a crash (``failed``).
* **Reaping**: a live runtime that is not busy arms the idle timer; the timer stops it only if it is
  still inactive. Busy states never expire. A deferred ``agent.terminate`` stops it once it settles.
* **Shutdown**: ``daemon.shutdown`` lets running turns finish (``force`` kills). Ctrl-C / SIGTERM on
  the daemon (``interrupt``) says in one line what it waits for, tells every runtime to stop its
  work now (each aborts its turn and saves its session), kills those still there after
  ``INTERRUPT_GRACE``; a second interrupt kills them at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shard.daemon import wire
from shard.daemon.effects import (
    Broadcast,
    CancelTimer,
    Generation,
    KillRuntime,
    Log,
    Outbox,
    SpawnRuntime,
    StartTimer,
    Stopped,
    StopRuntime,
    TimerKey,
)
from shard.daemon.limits import Occupant, admit
from shard.daemon.slot import AgentSlot, Started
from shard.protocol.agents import RuntimeState
from shard.protocol.errors import ErrorCode, ShardError


@dataclass(frozen=True, slots=True)
class Reap(TimerKey):
    """The agent's idle clock: its runtime stops when it runs out."""

    agent_id: str


@dataclass(frozen=True, slots=True)
class KillLate(TimerKey):
    """A runtime told to stop now is killed if it is still there."""

    agent_id: str


@dataclass(frozen=True, slots=True)
class Grace(TimerKey):
    """An interrupted daemon kills the runtimes still there."""


_GRACE = Grace()
INTERRUPT_GRACE = 1.5  # seconds a runtime told to stop now has to exit before it is killed

# what a runtime is doing, as the shutdown line says it
_DOING: dict[str, str] = {
    "streaming": "streaming",
    "waiting_for_permission": "waiting for a permission answer",
    "waiting_for_ui": "waiting for an answer to a question",
    "compacting": "compacting",
}


class Supervisor:
    def __init__(
        self,
        agents: dict[str, AgentSlot],
        out: Outbox,
        *,
        clock: Callable[[], float],
        idle_timeout: float,
        max_runtimes: int,
    ) -> None:
        self.agents = agents
        self.out = out
        self.clock = clock
        self.idle_timeout = idle_timeout
        self.max_runtimes = max_runtimes
        self.shutting_down = False
        self.interrupted = False
        self.stopped = False
        self._queue: list[AgentSlot] = []  # admitted starts, in order, waiting to be spawned

    # --- starts ---------------------------------------------------------------------------------

    def ensure_running(self, slot: AgentSlot, then: Started) -> None:
        """``then(None)`` once the runtime is ready (now, if it is), ``then(error)`` if its start fails.
        Raises RUNTIME_START_FAILED when the limit leaves no room."""
        if slot.live:
            then(None)
            return
        if slot.removing:
            raise ShardError(ErrorCode.CONFLICT, f"{slot.agent_id} is being removed")
        if not slot.start_pending:
            # Decided and reserved in one step: two starts cannot both take the last place or both
            # pick the same runtime to stop.
            self._make_room(slot)
            slot.start_pending = True
            self._queue.append(slot)
        slot.ready_waiters.append(then)
        self.spawn_queued()

    def _make_room(self, slot: AgentSlot) -> None:
        occupants = [
            Occupant(s.agent_id, s.live and not s.busy, s.idle_since)
            for s in self.agents.values()
            if s is not slot and (s.start_pending or s.live)
        ]
        admission = admit(occupants, self.max_runtimes)
        if not admission.allowed:
            limit = self.max_runtimes
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED,
                f"{limit} runtimes are running, the limit, and none is idle; retry once one is, or "
                "raise the limit (shard daemon --max-runtimes, or [daemon] max_runtimes in config.toml)",
                {"limit": limit, "retryable": True},
            )
        if admission.reap is not None:  # its exit frees the place this start waits for
            self.begin_stop(self.agents[admission.reap])

    def spawn_queued(self) -> None:
        """Spawn every queued start that may go now, in order."""
        for slot in list(self._queue):
            if slot.gen is not None:
                continue  # its previous process, which holds the session's lock, is still exiting
            if self.shutting_down:  # the place was freed by the shutdown itself
                self._queue.remove(slot)
                self.start_failed(
                    slot, ShardError(ErrorCode.RUNTIME_START_FAILED, "the daemon is shutting down")
                )
                continue
            if sum(1 for s in self.agents.values() if s.gen is not None) >= self.max_runtimes:
                return
            self._queue.remove(slot)
            slot.gen = Generation(slot.agent_id)
            self._set_state(slot, "starting")
            self.out.add(SpawnRuntime(slot.gen, slot.record, slot.adoption_overrides))

    def ready(self, slot: AgentSlot) -> list[Started]:
        """The spawned process sent hello and sync: the slot is running; the caller tells the waiters."""
        slot.start_pending = False
        slot.adoption_overrides = False
        slot.epoch += 1
        self._set_state(slot, "running")
        waiters, slot.ready_waiters = slot.ready_waiters, []
        return waiters

    def start_failed(self, slot: AgentSlot, error: ShardError) -> None:
        """The start failed (its process, if any, is gone): ``failed``, and every waiter is told."""
        slot.gen = None
        slot.start_pending = False
        self._set_state(slot, "failed")
        waiters, slot.ready_waiters = slot.ready_waiters, []
        for then in waiters:
            then(error)
        self.spawn_queued()

    # --- stops ----------------------------------------------------------------------------------

    def begin_stop(self, slot: AgentSlot) -> Generation | None:
        """Close the live runtime's stdin (``stopping``); the generation to wait for, None if none."""
        self.cancel_reap(slot)
        slot.terminate_when_idle = False
        gen = slot.gen
        if gen is None or not slot.live:
            return None
        gen.stop_requested = True
        self._set_state(slot, "stopping")
        self.out.add(StopRuntime(gen))
        return gen

    def kill(self, slot: AgentSlot, *, force: bool) -> Generation | None:
        """Signal the runtime process (ready or stopping); the generation to wait for, None if none."""
        gen = slot.gen
        if gen is None or slot.runtime.state not in ("running", "stopping"):
            return None
        gen.stop_requested = True
        self.out.add(KillRuntime(gen, force))
        return gen

    def stop_now(self, slot: AgentSlot, grace: float) -> None:
        """SIGTERM the runtime now (its turn is aborted and saved), SIGKILL after ``grace`` seconds
        if it is still there."""
        if self.kill(slot, force=False) is not None:
            self.out.add(StartTimer(KillLate(slot.agent_id), grace))

    def cancel_start(self, slot: AgentSlot, error: ShardError) -> None:
        """Drop a start admitted but not spawned yet; its waiters get ``error``."""
        if slot in self._queue:
            self._queue.remove(slot)
        slot.start_pending = False
        waiters, slot.ready_waiters = slot.ready_waiters, []
        for then in waiters:
            then(error)
        self.spawn_queued()

    def exited(self, slot: AgentSlot, gen: Generation) -> bool:
        """The process ended: the slot holds none any more. True when it was a crash (the daemon
        had not asked it to end)."""
        slot.gen = None
        self.cancel_reap(slot)
        return not gen.stop_requested

    def ended(self, slot: AgentSlot, crashed: bool, code: int | None, stderr: str) -> None:
        """After an exit was cleaned up: a crash is ``failed`` with ``agent_exited`` to everyone, a
        requested stop ``stopped``; whoever waited for the exit is told, and a place may be free for
        a queued start."""
        if crashed:
            slot.status = "error"
            slot.runtime.move("failed")
            self.out.add(Broadcast(wire.exited(slot, code, stderr)))
            self.out.add(Broadcast(wire.status_changed(slot)))
        else:
            slot.status = "idle"
            self._set_state(slot, "stopped")
        waiters, slot.exit_waiters = slot.exit_waiters, []
        for then in waiters:
            then()
        self.spawn_queued()
        self.check_stopped()

    # --- idle reaping and deferred terminate ----------------------------------------------------

    def settle(self, slot: AgentSlot) -> None:
        """Work may have ended: a deferred terminate happens now, else the idle clock starts."""
        if slot.busy:
            return
        if slot.terminate_when_idle:
            self.begin_stop(slot)
        else:
            self.schedule_reap(slot)

    def schedule_reap(self, slot: AgentSlot) -> None:
        self.cancel_reap(slot)
        if slot.live and not slot.busy:
            slot.idle_since = self.clock()
            slot.reap_armed = True
            self.out.add(StartTimer(Reap(slot.agent_id), self.idle_timeout))

    def cancel_reap(self, slot: AgentSlot) -> None:
        if slot.reap_armed:
            slot.reap_armed = False
            self.out.add(CancelTimer(Reap(slot.agent_id)))

    def timer(self, key: TimerKey) -> None:
        if isinstance(key, KillLate):  # a stop_now past its grace
            late = self.agents.get(key.agent_id)
            if late is not None and late.gen is not None:
                self.kill(late, force=True)
        elif isinstance(key, Grace):
            left = self._exiting()
            self._kill_all(left, f"{_runtimes(len(left))} did not stop within {INTERRUPT_GRACE:g} s")
        elif isinstance(key, Reap):
            slot = self.agents.get(key.agent_id)
            if slot is None or not slot.reap_armed:
                return  # cancelled meanwhile
            slot.reap_armed = False
            if slot.live and not slot.busy:
                self.begin_stop(slot)

    # --- shutdown -------------------------------------------------------------------------------

    def shutdown(self, *, force: bool) -> None:
        """Graceful: every runtime's stdin is closed, so running turns finish; ``force``: killed."""
        if self.shutting_down:
            return
        self.shutting_down = True
        for slot in list(self.agents.values()):
            if force:
                self.kill(slot, force=True)
            else:
                self.begin_stop(slot)
        self.spawn_queued()
        self.check_stopped()

    def interrupt(self) -> None:
        """Ctrl-C / SIGTERM on the daemon: say what it waits for, tell every runtime to stop its work
        now, and kill those that have not exited after the grace; a second interrupt kills at once."""
        if self.interrupted:
            self.out.add(CancelTimer(_GRACE))
            self._kill_all(self._exiting(), "stopping at once")
            return
        self.interrupted = self.shutting_down = True
        slots = self._exiting()
        self.out.add(Log(f"shard daemon: {_stopping_line(slots)}"))
        for slot in slots:
            assert slot.gen is not None
            self.cancel_reap(slot)
            slot.terminate_when_idle = False
            slot.gen.stop_requested = True
            self._set_state(slot, "stopping")
            self.out.add(StopRuntime(slot.gen, now=True))
        if slots:
            self.out.add(StartTimer(_GRACE, INTERRUPT_GRACE))
        self.spawn_queued()
        self.check_stopped()

    def _exiting(self) -> list[AgentSlot]:
        """The slots whose runtime process is ready or exiting (what a shutdown waits for)."""
        alive = ("running", "stopping")
        return [s for s in self.agents.values() if s.gen is not None and s.runtime.state in alive]

    def _kill_all(self, slots: list[AgentSlot], why: str) -> None:
        if not slots:
            return
        self.out.add(Log(f"shard daemon: {why}: killing {', '.join(s.agent_id for s in slots)}"))
        for slot in slots:
            self.kill(slot, force=True)

    def check_stopped(self) -> None:
        """Once shutting down and no runtime process is ready or exiting, the shutdown is complete."""
        if not self.shutting_down or self.stopped or self._exiting():
            return
        self.stopped = True
        if self.interrupted:
            self.out.add(CancelTimer(_GRACE))
        self.out.add(Stopped())

    def _set_state(self, slot: AgentSlot, state: RuntimeState) -> None:
        if slot.runtime.move(state):
            self.out.add(Broadcast(wire.status_changed(slot)))


def _runtimes(n: int) -> str:
    return f"{n} runtime" if n == 1 else f"{n} runtimes"


def _stopping_line(slots: list[AgentSlot]) -> str:
    """``stopping 2 runtimes (1 streaming, 1 waiting for a permission answer)…``: what the shutdown
    waits for, by what each runtime is doing."""
    if not slots:
        return "stopping…"
    counts: dict[str, int] = {}
    for slot in slots:
        doing = _DOING.get(slot.status, "idle")
        counts[doing] = counts.get(doing, 0) + 1
    order = [*_DOING.values(), "idle"]
    parts = ", ".join(f"{counts[d]} {d}" for d in order if d in counts)
    return f"stopping {_runtimes(len(slots))} ({parts})… (Ctrl-C again stops them at once)"

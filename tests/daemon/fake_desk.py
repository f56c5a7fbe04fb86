"""A desk in memory (``shard.daemon.desk``) for testing one department on its own: no broker, no
supervisor, no runtimes. It keeps what the department asked of it — messages, effects, runtime
commands, starts, stops — and the test plays the broker's part by calling back what it kept
(``started``'s waiters, ``asked``'s answers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from shard.daemon import wire
from shard.daemon.desk import Answered, OrchestratorDesk
from shard.daemon.effects import Client, Effect, Generation
from shard.daemon.lifecycle import Role
from shard.daemon.record import AgentRecord
from shard.daemon.slot import AgentSlot, Answer, Started
from shard.protocol import commands as cmd
from shard.protocol.command_base import CommandBase
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.testing.manifests import MemoryManifests


@dataclass
class Asked:
    slot: AgentSlot
    command: cmd.AgentCommand
    then: Answered | None

    def answer(self, success: bool = True, **data: Any) -> None:
        assert self.then is not None, f"nobody waits for the answer to {self.command.type}"
        self.then(Answer(success, dict(data)))


class FakeDesk:
    def __init__(self, manifests: MemoryManifests | None = None) -> None:
        self.manifests = manifests or MemoryManifests()
        self.fallback_model: str | None = None
        self.shutting_down = False
        self.clock = 1.7e9
        self._agents: dict[str, AgentSlot] = {}
        self.admitted: list[AgentSlot] = []
        self.forgotten: list[str] = []
        self.sent: list[tuple[Client, dict[str, Any]]] = []
        self.broadcasts: list[dict[str, Any]] = []
        self.effects: list[Effect] = []
        self.asked: list[Asked] = []
        self.started: list[tuple[AgentSlot, Started]] = []
        self.stops: list[AgentSlot] = []
        self.kills: list[tuple[AgentSlot, bool]] = []
        self.removed: list[str] = []

    # --- the agents ---

    @property
    def agents(self) -> Mapping[str, AgentSlot]:
        return self._agents

    def slot(self, agent_id: str) -> AgentSlot:
        if agent_id not in self._agents:
            raise ShardError(ErrorCode.NOT_FOUND, f"no agent {shown(agent_id)}")
        return self._agents[agent_id]

    def admit(self, record: AgentRecord, *, adoption_overrides: bool = False) -> AgentSlot:
        slot = AgentSlot(record, adoption_overrides=adoption_overrides)
        self._agents[record.agent_id] = slot
        self.admitted.append(slot)
        return slot

    def forget(self, slot: AgentSlot) -> None:
        self.manifests.remove(slot.agent_id)
        del self._agents[slot.agent_id]
        self.forgotten.append(slot.agent_id)

    # --- clients ---

    def send(self, client: Client, data: bytes) -> None:
        self.sent.append((client, orjson.loads(data)))

    def broadcast(self, data: bytes) -> None:
        self.broadcasts.append(orjson.loads(data))

    def resume(self, client: Client) -> None:
        client.waiting = False

    def step(self, client: Client, command: CommandBase, work: Callable[[], None]) -> bool:
        try:
            work()
            return True
        except ShardError as exc:
            self.send(client, wire.failure(exc, id=command.id, command=command.type))
        self.resume(client)
        return False

    def emit(self, effect: Effect) -> None:
        self.effects.append(effect)

    # --- runtimes ---

    def ask(self, slot: AgentSlot, command: cmd.AgentCommand, then: Answered | None = None) -> None:
        self.asked.append(Asked(slot, command, then))

    def ensure_running(self, slot: AgentSlot, then: Started) -> None:
        if slot.removing:
            raise ShardError(ErrorCode.CONFLICT, f"{slot.agent_id} is being removed")
        self.started.append((slot, then))

    def stop(self, slot: AgentSlot) -> Generation | None:
        self.stops.append(slot)
        return None

    def kill(self, slot: AgentSlot, *, force: bool) -> Generation | None:
        self.kills.append((slot, force))
        return None

    def now(self) -> float:
        return self.clock

    # --- the orchestrator's ---

    def attach(self, client: Client, slot: AgentSlot, role: Role) -> None:
        slot.attach(client, role)

    def detach(self, client: Client, agent_id: str) -> None:
        slot = self._agents.get(agent_id)
        if slot is not None:
            slot.detach(client)

    def stop_now(self, slot: AgentSlot, grace: float) -> None:
        self.kills.append((slot, False))

    def cancel_start(self, slot: AgentSlot, error: ShardError) -> None:
        slot.start_pending = False

    def removing(self, agent_ids: Sequence[str]) -> None:
        self.removed.extend(agent_ids)

    # --- for the test ---

    def replies(self, client: Client) -> list[dict[str, Any]]:
        return [m for c, m in self.sent if c is client]

    def run_started(self, error: ShardError | None = None) -> None:
        """Every runtime start asked for so far succeeds (or fails with ``error``)."""
        started, self.started = self.started, []
        for _, then in started:
            then(error)


def typed(desk: FakeDesk) -> OrchestratorDesk:
    """The fake as the port it stands for (mypy checks the two agree)."""
    return desk

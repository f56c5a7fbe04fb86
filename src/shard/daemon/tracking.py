"""What the daemon learns from a runtime's events about its agent (sans-I/O): the status it
broadcasts and reaps by, the model and mode it remembers in the registry, the usage it sums."""

from __future__ import annotations

from typing import Any

from shard.daemon import wire
from shard.daemon.effects import Broadcast, Outbox, Remember
from shard.daemon.lifecycle import ACTIVE_STATUSES
from shard.daemon.slot import AgentSlot
from shard.daemon.supervisor import Supervisor
from shard.protocol.agents import AGENT_STATUSES


def track(slot: AgentSlot, event: dict[str, Any], out: Outbox, supervisor: Supervisor) -> None:
    kind = event.get("type")
    if kind == "status":
        status = event.get("status")
        if status in AGENT_STATUSES:
            slot.status = status
        detail = event.get("detail")
        out.add(Broadcast(wire.status_changed(slot, detail if isinstance(detail, str) else None)))
        if slot.status in ACTIVE_STATUSES:
            supervisor.cancel_reap(slot)
        else:
            supervisor.settle(slot)
    elif kind == "model_changed":
        active = event.get("active") or {}
        slot.record.model, slot.record.provider = active.get("id"), active.get("provider")
        out.add(Remember(slot.agent_id, {"model": slot.record.model, "provider": slot.record.provider}))
        if isinstance(event.get("capabilities"), list):
            slot.capabilities = event["capabilities"]
    elif kind == "mode_changed":
        slot.record.mode = event.get("mode")
        out.add(Remember(slot.agent_id, {"mode": slot.record.mode}))
    elif kind == "queue_changed" and isinstance(event.get("queue"), list):
        slot.queue = event["queue"]  # handed back to its viewers if the runtime dies with it
    elif kind == "turn_end" and isinstance(event.get("usage"), dict):
        for k, v in event["usage"].items():
            if isinstance(v, int | float) and not isinstance(v, bool) and k != "context_tokens":
                slot.usage[k] = slot.usage.get(k, 0) + v

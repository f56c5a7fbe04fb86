"""The one fold of an agent's events (``shard.client.agent_state.AgentState``) that the SDK's Agent
and the terminal client's view both extend: driven with plain event objects."""

from __future__ import annotations

from typing import Any

from shard.client.agent_state import AgentState
from shard.protocol.events import (
    ModeChanged,
    ModelChanged,
    PermissionRequest,
    PermissionResolved,
    ReasoningLevelChanged,
    Status,
    Sync,
    UsageEvent,
)
from shard.protocol.queue import QueueChanged

A = "agent-1"
SMALL = {"id": "t/small", "provider": "t", "model": "small", "context_window": 8192,
         "context_window_source": "server"}  # fmt: skip
BIG = {"id": "t/big", "provider": "t", "model": "big"}


def synced(**extra: Any) -> Sync:
    fields = {"agent_id": A, "status": "idle", "mode": "build", "live_window": {"messages": []}}
    return Sync.model_validate({"pending_requests": [], **fields, **extra})


def asked(rid: str) -> PermissionRequest:
    return PermissionRequest(
        agent_id=A, request_id=rid, tool_name="bash", input={}, prompt="Run?", options=["allow", "deny"]
    )


def queued(qid: str) -> dict[str, Any]:
    return {"queue_id": qid, "message": f"later {qid}", "behavior": "follow_up", "queued_at": 1.0}


def test_sync_replaces_and_the_events_after_it_change_one_thing_each():
    """Covers: R9.1.4, R9.1.10, R10.2.4"""
    state = AgentState(A)
    state.apply(Status(agent_id=A, status="streaming", detail="retrying in 2 s"))
    state.apply(asked("stale"))
    state.apply(synced(mode="plan", runtime_epoch=2, capabilities=["mode-switch"], model=SMALL))
    assert (state.status, state.status_detail, state.mode, state.runtime_epoch) == ("idle", None, "plan", 2)
    assert state.pending == {}  # the sync's pending requests, not what came before
    assert (state.model, state.context_window, state.context_window_source) == ("t/small", 8192, "server")
    assert state.supports("mode-switch")
    assert not state.supports("model-switch")
    assert state.transcript.syncs == 1
    state.apply(ModeChanged(agent_id=A, previous_mode="plan", mode="build"))
    state.apply(ModelChanged.model_validate({"agent_id": A, "previous": SMALL, "active": BIG}))
    assert (state.mode, state.model, state.context_window) == ("build", "t/big", None)
    assert state.capabilities == frozenset({"mode-switch"})  # absent from model_changed: unchanged
    none = {"agent_id": A, "previous": BIG, "active": BIG, "capabilities": []}
    state.apply(ModelChanged.model_validate(none))
    assert state.capabilities == frozenset()
    level = {"agent_id": A, "model": BIG, "previous": "low", "active": "high"}
    state.apply(ReasoningLevelChanged.model_validate(level))
    assert state.reasoning == "high"


def test_no_capabilities_in_sync_means_no_controls():
    """Covers: R9.1.10"""
    state = AgentState(A)
    state.apply(synced(capabilities=["model-switch"]))
    state.apply(synced())
    assert state.capabilities is None
    assert not state.supports("model-switch")


def test_the_context_window_is_learnt_from_usage_and_kept_by_a_sync_that_does_not_say():
    state = AgentState(A)
    usage = {"agent_id": A, "input": 1, "output": 1, "context_window": 4096,
             "context_window_source": "default"}  # fmt: skip
    state.apply(UsageEvent.model_validate(usage))
    assert (state.context_window, state.context_window_source) == (4096, "default")
    state.apply(synced(model=BIG))  # names the model, not its window
    assert (state.model, state.context_window) == ("t/big", 4096)
    state.apply(synced())  # names no model: the one known stays
    assert state.model == "t/big"


def test_pending_requests_and_the_queue():
    state = AgentState(A)
    state.apply(synced(pending_requests=[asked("r1").to_wire()], queue=[queued("q1")]))
    state.apply(asked("r2"))
    assert list(state.pending) == ["r1", "r2"]
    state.apply(PermissionResolved(agent_id=A, request_id="r1", decision="allow"))
    state.apply(PermissionResolved(agent_id=A, request_id="unknown", decision="deny"))
    assert list(state.pending) == ["r2"]
    assert [q.queue_id for q in state.queue] == ["q1"]
    change = {"agent_id": A, "queue": [queued("q2"), queued("q3")], "reason": "queued"}
    state.apply(QueueChanged.model_validate(change))
    assert [q.queue_id for q in state.queue] == ["q2", "q3"]  # replaced whole

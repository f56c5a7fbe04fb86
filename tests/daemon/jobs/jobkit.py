"""Helpers for job tests: a parent agent, jobs created through the wire, children driven to the end
of their turn."""

from __future__ import annotations

from typing import Any

from shard.testing.broker import BrokerHarness, MemoryClient

TASK = "SECRET-TASK-7f3a: refactor the billing module"  # task text that must never leak


def parent(harness: BrokerHarness) -> tuple[MemoryClient, str]:
    client = harness.connect()
    return client, client.create("/project")


def create(client: MemoryClient, parent_id: str, **fields: Any) -> dict[str, Any]:
    if "tasks" not in fields and "task" not in fields:
        fields = {"name": "scout", "task": TASK, **fields}
    return client.request({"type": "subagent.create", "parent_agent_id": parent_id, **fields})


def batch(client: MemoryClient, parent_id: str, strategy: str, *names: str) -> dict[str, Any]:
    tasks = [{"name": n, "task": f"{TASK} #{i}"} for i, n in enumerate(names)]
    response = create(client, parent_id, tasks=tasks, strategy=strategy)
    assert response["success"], response
    return response["data"]


def command(client: MemoryClient, kind: str, parent_id: str, **fields: Any) -> dict[str, Any]:
    return client.request({"type": f"subagent.{kind}", "parent_agent_id": parent_id, **fields})


def finish(
    harness: BrokerHarness,
    agent_id: str,
    text: str = "done",
    *,
    error: bool = False,
    usage: dict[str, int] | None = None,
) -> None:
    """The child's turn: streaming, an answer (or an error), turn_end (with ``usage``), idle."""
    runtime = harness.runtime(agent_id)
    runtime.emit({"type": "status", "status": "streaming"})
    runtime.emit({"type": "turn_start", "turn_id": "turn-1"})
    if error:
        runtime.emit({"type": "error", "code": "PROVIDER_ERROR", "message": f"boom {TASK}", "fatal": False})
    else:
        message = {"id": "msg-9", "role": "assistant", "content": [{"type": "text", "text": text}]}
        runtime.emit({"type": "message_complete", "message_id": "msg-9", "message": message})
    runtime.emit({"type": "turn_end", "turn_id": "turn-1", "usage": usage or {"input": 10, "output": 3}})
    runtime.emit({"type": "status", "status": "idle"})


def changes(client: MemoryClient, run_id: str | None = None) -> list[str]:
    return [m["state"] for m in client.of_type("subagent_run_changed") if run_id in (None, m["run_id"])]

"""Recorded event streams (``tests/fixtures/streams/*.json``) folded by the Python SDK: the same files
the web client's store folds in its unit tests (``web/test/fixtures.test.ts``), each compared with the
expected state the file holds, so the two clients' folds cannot drift apart.

A file is ``{"description", "agent_id", "events": [wire messages, in the order one client received
them], "checkpoints": [{"after": n, "expected": view}]}``: ``view`` is :func:`agent_view` of the
agent after folding the first ``n`` events. ``web/src/store/view.ts`` is this function's twin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from shard.client.agent import Agent
from shard.client.decode import decode_event
from shard.protocol.commands import AgentCommand
from shard.protocol.events import AgentEvent, Response


async def _unused(command: AgentCommand, timeout: float | None = None, role: str | None = None) -> Response:
    raise AssertionError("a recorded stream sends nothing")


def fold(agent_id: str, events: list[dict[str, Any]]) -> Agent:
    """The SDK's agent after ``events``, routed as ``ShardClient`` routes them: only this agent's."""
    agent = Agent(_unused, agent_id)
    for raw in events:
        event = decode_event(orjson.dumps(raw))
        if isinstance(event, AgentEvent) and event.agent_id == agent_id:
            agent._receive(event)
    return agent


def agent_view(agent: Agent) -> dict[str, Any]:
    """What a client shows of an agent, as plain JSON: status, mode, epoch, capabilities, pending
    requests, queue, and the conversation (text, tool calls with their answers, tool results, each
    turn's usage, what is still streaming)."""
    transcript = agent.transcript
    return {
        "status": agent.status,
        "status_detail": agent.status_detail,
        "mode": agent.mode,
        "runtime_epoch": agent.runtime_epoch,
        "capabilities": sorted(agent.capabilities) if agent.capabilities is not None else None,
        "pending": sorted(agent.pending),
        "queue": [q.message for q in agent.queue],
        "messages": [_message(m.to_wire()) for m in transcript.messages],
        "turns": [[t.turn_id, t.last_message_id, t.usage.output] for t in transcript.turns],
        "streaming": {
            message_id: "".join(b.text for _, b in sorted(blocks.items()))
            for message_id, blocks in transcript.streaming.items()
        },
    }


def _message(wire: dict[str, Any]) -> dict[str, Any]:
    blocks = wire["content"]
    calls = []
    for b in blocks:
        if b.get("type") == "tool_call":
            answer = b.get("permission") or {}
            calls.append([b["id"], b["name"], answer.get("intent") or answer.get("decision")])
    return {
        "id": wire["id"],
        "role": wire["role"],
        "text": "".join(b.get("text", "") for b in blocks if b.get("type") == "text"),
        "tool_calls": calls,
        "tool_results": [
            [b["tool_call_id"], bool(b.get("is_error"))] for b in blocks if b.get("type") == "tool_result"
        ],
        "stop_reason": wire.get("stop_reason"),
    }


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(path.read_bytes())
    return loaded

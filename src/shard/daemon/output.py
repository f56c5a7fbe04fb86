"""What a runtime writes, as the broker takes it (PROTOCOL §6.3, §6.4), sans-I/O: every event tagged
with its ``agent_id`` once and fanned out to the attachments (a byte splice, no decoding for
``message_delta``), open broadcast requests kept and shown to delegates, what the daemon learns
from the events tracked, internal subscribers told, responses routed back to whoever waits — and,
when the runtime is gone, every waiter told. Given only what it uses, like the supervisor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from shard.daemon import wire
from shard.daemon.answers import answerers
from shard.daemon.effects import Client, Log, Outbox, Send, Subscriber
from shard.daemon.slot import UNANSWERED, AgentSlot, Answer, Forwarded, OpenRequest
from shard.daemon.supervisor import Supervisor
from shard.daemon.tracking import track
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import Oversized, peek_envelope

THINKING = {"type": "message_delta", "kind": "thinking"}  # what subscribers get for a delta
TEXT = {"type": "message_delta", "kind": "text"}


class RuntimeOutput:
    def __init__(
        self,
        agents: Mapping[str, AgentSlot],
        out: Outbox,
        supervisor: Supervisor,
        subscribers: list[Subscriber],  # of every agent; the broker's list, which grows
    ) -> None:
        self.agents = agents
        self.out = out
        self.supervisor = supervisor
        self.subscribers = subscribers

    def line(self, slot: AgentSlot, line: bytes) -> None:
        """One line the runtime wrote (without its LF) that is not a ``message_delta``: the broker
        fans deltas out itself, the hot path."""
        if line.startswith(b"{"):
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                event = None
            if isinstance(event, dict):
                if event.get("type") == "response":
                    self._on_response(slot, event)
                else:
                    self._on_event(slot, slot.tag + line[1:], event)

    def oversized(self, slot: AgentSlot, record: Oversized) -> None:
        """A line over the cap is dropped; when it was a response, its waiter is told."""
        msg_id, msg_type = peek_envelope(record.prefix)
        self.out.add(
            Log(
                f"shard daemon: the runtime of {slot.agent_id} wrote a {msg_type or 'message'} of"
                f" {record.size} bytes, over the cap; dropped"
            )
        )
        fwd = slot.forwarded.pop(msg_id, None) if msg_type == "response" and msg_id else None
        if fwd is not None:
            _unanswered(fwd, f"the runtime's response was {record.size} bytes, over the cap", self.out)
            self.supervisor.settle(slot)

    def gone(self, slot: AgentSlot) -> None:
        """The runtime exited: nothing more will answer what it was sent, close its requests or
        deliver what it had queued."""
        for fwd in slot.forwarded.values():
            _unanswered(fwd, "the agent's runtime exited before answering", self.out)
        slot.forwarded.clear()
        for rid, entry in slot.open_requests.items():
            closing = wire.closed_by_exit(slot, rid, entry.event.get("type"))
            self.out.add(Send(tuple({*slot.attachments, *entry.delegated_to}), closing))
        slot.open_requests.clear()
        if slot.queue:
            self.out.add(Send(slot.fanout, wire.returned_on_exit(slot)))
            slot.queue = []

    def _on_event(self, slot: AgentSlot, tagged: bytes, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("permission_request", "ui_request") and event.get("kind") != "notify":
            entry = OpenRequest(tagged, event)
            slot.open_requests[str(event.get("request_id"))] = entry
            conns, delegated = answerers(self.agents, slot)
            if delegated:  # an ancestor's client attached here too has it from the fan-out below
                entry.delegated_to.update(conns)
                self.out.add(Send(tuple(c for c in conns if c not in slot.attachments), tagged))
        elif kind in ("permission_resolved", "ui_resolved"):
            closed = slot.open_requests.pop(str(event.get("request_id")), None)
            if closed is not None and closed.delegated_to:
                self.out.add(Send(tuple(closed.delegated_to - set(slot.attachments)), tagged))
        if slot.fanout:
            self.out.add(Send(slot.fanout, tagged))
        track(slot, event, self.out, self.supervisor)
        self.notify(slot, event)

    def _on_response(self, slot: AgentSlot, response: dict[str, Any]) -> None:
        fwd = slot.forwarded.pop(response.get("id", ""), None)
        if fwd is None:
            return
        if fwd.then is not None:
            fwd.then(Answer.of(response))
        elif fwd.client is not None and fwd.command not in ("permission_response", "ui_response"):
            if fwd.original_id is None:
                response.pop("id", None)
            else:
                response["id"] = fwd.original_id
            self._send(fwd.client, orjson.dumps({"agent_id": slot.agent_id, **response}))
        self.supervisor.settle(slot)

    def notify(self, slot: AgentSlot, event: dict[str, Any]) -> None:
        for subscriber in (*self.subscribers, *slot.subscribers):
            for effect in subscriber.event(slot.agent_id, slot.status, event):
                self.out.add(effect)

    def _send(self, client: Client, data: bytes) -> None:
        self.out.add(Send((client,), data))


def _unanswered(fwd: Forwarded, why: str, out: Outbox) -> None:
    """A forwarded command whose answer will not come: its waiter or its client is told."""
    if fwd.then is not None:
        fwd.then(UNANSWERED)
    elif fwd.client is not None:
        error = ShardError(ErrorCode.INTERNAL_ERROR, why)
        out.add(Send((fwd.client,), wire.failure(error, id=fwd.original_id, command=fwd.command)))

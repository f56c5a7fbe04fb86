"""Every message the daemon authors, built from the ``shard.protocol`` models (PROTOCOL §7, §9.3,
§10.2) and encoded once. What a runtime wrote is relayed as its own bytes, tagged with ``agent_id``
(``broker.py``): the runtime built it from the same models."""

from __future__ import annotations

from typing import Any

import orjson

from shard._version import PROTOCOL_VERSION, __version__
from shard.daemon.slot import AgentSlot
from shard.protocol.base import WireModel
from shard.protocol.codec import error_response
from shard.protocol.commands import CommandBase
from shard.protocol.errors import ShardError
from shard.protocol.events import (
    AgentExited,
    AgentRemoved,
    AgentSpawned,
    AgentStatusChanged,
    Hello,
    PermissionResolved,
    Response,
    UiResolved,
)
from shard.protocol.queue import QueueChanged, QueuedMessage

# Daemon-level commands a client may look for before using them (additive, §7)
DAEMON_CAPABILITIES = (
    "agent-remove",
    "client-identify",
    "agent-rename",
    "fs-read",
    "fs-complete",
    "hosts",
    "workspace-diff",
)


def hello(transport: str, client_id: str) -> bytes:
    # transport-scoped (§7): each runtime's own capabilities reach clients in its sync
    caps = [transport, "streaming-deltas", *DAEMON_CAPABILITIES]
    return Hello(
        protocol_version=PROTOCOL_VERSION, server_version=__version__, capabilities=caps, client_id=client_id
    ).to_json()


def reply(command: CommandBase, data: WireModel | None = None, *, agent_id: str | None = None) -> bytes:
    """``response {success: true}`` to ``command``, with its id (or none) and ``data`` when given."""
    fields: dict[str, Any] = {"command": command.type, "success": True}
    if command.id is not None:
        fields["id"] = command.id
    if agent_id is not None:
        fields["agent_id"] = agent_id
    if data is not None:
        fields["data"] = data.to_wire()
    return Response(**fields).to_json()


def failure(error: ShardError, *, id: str | None, command: str | None) -> bytes:
    return error_response(error, id=id, command=command).to_json()


def status_changed(slot: AgentSlot, detail: str | None = None) -> bytes:
    fields: dict[str, Any] = {
        "agent_id": slot.agent_id,
        "status": slot.status,
        "runtime_state": slot.runtime.state,
    }
    if detail:
        fields["detail"] = detail
    return AgentStatusChanged.model_validate(fields).to_json()


def spawned(slot: AgentSlot) -> bytes:
    return AgentSpawned(agent_id=slot.agent_id, info=slot.info()).to_json()


def removed(slot: AgentSlot) -> bytes:
    return AgentRemoved(agent_id=slot.agent_id, session_id=slot.record.session_id).to_json()


def exited(slot: AgentSlot, code: int | None, stderr: str) -> bytes:
    reason = f"the runtime exited unexpectedly (exit code {code})" + (f": {stderr[-300:]}" if stderr else "")
    fields: dict[str, Any] = {"agent_id": slot.agent_id, "reason": reason}
    if code is not None:
        fields["exit_code"] = code
    return AgentExited.model_validate(fields).to_json()


def closed_by_exit(slot: AgentSlot, request_id: str, request_type: object) -> bytes:
    """How a request still open when its runtime exits is closed for its viewers: denied, or
    dismissed, by ``runtime-exited``."""
    if request_type == "permission_request":
        return PermissionResolved(
            agent_id=slot.agent_id, request_id=request_id, decision="deny", source="runtime-exited"
        ).to_json()
    # ``source`` is additive on ui_resolved (the model keeps unknown fields)
    fields = {"agent_id": slot.agent_id, "request_id": request_id, "value": None, "source": "runtime-exited"}
    return UiResolved.model_validate(fields).to_json()


def returned_on_exit(slot: AgentSlot) -> bytes:
    """What was queued when the runtime exited will never be delivered: handed back to the viewers."""
    event = QueueChanged(agent_id=slot.agent_id, queue=[], reason="runtime_exited")
    event.returned = [QueuedMessage.model_validate(q) for q in slot.queue]
    return event.to_json()


def tagged_sync(sync: dict[str, Any], slot: AgentSlot) -> bytes:
    """The runtime's own sync snapshot as a client gets it: with ``agent_id`` and ``runtime_epoch``."""
    return orjson.dumps({**sync, "agent_id": slot.agent_id, "runtime_epoch": slot.epoch})

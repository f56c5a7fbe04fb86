"""Who may answer an agent's broadcast requests, and whether an answer fits (PROTOCOL §6.3) — pure.

An agent's own interactive clients answer its requests; a child with none has them shown to its
nearest interactive ancestor's clients (delegation). Observers and internal subscribers never answer.
An answer that names no open request (late, or made up) is acknowledged and dropped by the caller;
one that does not fit the request it names is refused with INVALID_REQUEST and the request stays open.
"""

from __future__ import annotations

from collections.abc import Mapping

from shard.daemon.effects import Client
from shard.daemon.lifecycle import INTERACTIVE
from shard.daemon.slot import AgentSlot, OpenRequest
from shard.protocol import commands as cmd
from shard.protocol.answers import permission_answer_error, ui_answer
from shard.protocol.errors import ErrorCode, ShardError, shown


def ancestors(agents: Mapping[str, AgentSlot], slot: AgentSlot) -> list[AgentSlot]:
    """``slot``'s parent, grandparent, … nearest first; a cycle or a missing parent ends the walk."""
    out, seen = [], {slot.agent_id}
    parent_id = slot.record.parent_agent_id
    while parent_id and parent_id not in seen and parent_id in agents:
        seen.add(parent_id)
        out.append(agents[parent_id])
        parent_id = agents[parent_id].record.parent_agent_id
    return out


def answerers(agents: Mapping[str, AgentSlot], slot: AgentSlot) -> tuple[list[Client], bool]:
    """Who can answer this agent's requests: its own interactive clients, else those of its nearest
    ancestor that has any (True: delegated). Observers and internal subscribers never count
    (R6.3.12, R6.3.13)."""
    own = slot.interactive()
    if own:
        return own, False
    for ancestor in ancestors(agents, slot):
        theirs = ancestor.interactive()
        if theirs:
            return theirs, True
    return [], False


def open_request_answered(
    client: Client, slot: AgentSlot, command: cmd.PermissionResponse | cmd.UiResponse
) -> OpenRequest | None:
    """The open request ``command`` validly answers, or None when it names none (late or unknown).

    Raises NOT_ATTACHED for a stranger, PERMISSION_DENIED for an observer, INVALID_REQUEST for an
    answer that does not fit the request (a choice it does not offer, a value outside its options)."""
    role = client.attached.get(slot.agent_id)
    entry = slot.open_requests.get(command.request_id)
    delegated = entry is not None and client in entry.delegated_to
    if role is None and not delegated:
        raise ShardError(ErrorCode.NOT_ATTACHED, f"this connection is not attached to {slot.agent_id}")
    if role != INTERACTIVE and not delegated:
        raise ShardError(ErrorCode.PERMISSION_DENIED, "an observer attachment cannot answer requests")
    if entry is None or entry.answered:
        return None
    event = entry.event
    if isinstance(command, cmd.PermissionResponse):
        if event.get("type") != "permission_request":
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"{shown(command.request_id)} is not a permission request"
            )
        choices = event.get("choices") or []
        ids = {c["id"] for c in choices if isinstance(c, dict) and isinstance(c.get("id"), str)}
        why = permission_answer_error(ids, command.choice_id)
    else:
        if event.get("type") != "ui_request":
            raise ShardError(ErrorCode.INVALID_REQUEST, f"{shown(command.request_id)} is not a UI request")
        _, why = ui_answer(event.get("kind", ""), event.get("options"), command.value)
    if why is not None:
        raise ShardError(ErrorCode.INVALID_REQUEST, why)
    return entry

"""``agent.rename`` (Shard, protocol v1 additive), sans-I/O: the name people see for an agent.

The name is ``AgentInfo.name`` — the field ``agent.create {name}`` sets — so every client that shows
names already shows it. It is kept in the agent's row of ``state.db`` (its manifest), so it outlives
a reload and a daemon restart; the session file is the runtime's and is not touched. Whitespace runs
(a pasted newline included) become one space; an empty or null name gives the client's derived name
back. Every connection is told with ``agent_changed {agent_id, info}``, attached to the agent or
not, as ``agent_spawned`` is. Renaming never wakes the agent's runtime.
"""

from __future__ import annotations

from shard.daemon import wire
from shard.daemon.desk import Desk
from shard.daemon.effects import Client, Remember
from shard.protocol.daemon_commands import AgentRename
from shard.protocol.events import AgentChanged
from shard.protocol.results import AgentRenameResult


def cleaned(name: str | None) -> str | None:
    """One line, no edge spaces; None for nothing left."""
    return " ".join(name.split()) or None if name is not None else None


def rename(desk: Desk, client: Client, command: AgentRename) -> None:
    slot = desk.slot(command.agent_id)  # NOT_FOUND for an unknown agent
    slot.record.name = cleaned(command.name)
    desk.emit(Remember(slot.agent_id, {"name": slot.record.name}))
    info = slot.info()
    desk.send(client, wire.reply(command, AgentRenameResult(info=info)))
    desk.broadcast(AgentChanged(agent_id=slot.agent_id, info=info).to_json())

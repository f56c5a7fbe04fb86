"""The bases of every event (PROTOCOL §5, §9), shared by ``events.py`` and the modules whose events
it gathers into the catalog (``queue.py``, ``daemon_events.py``)."""

from shard.protocol.base import WireModel


class EventBase(WireModel):
    type: str


class AgentEvent(EventBase):
    """A per-agent event: tagged with ``agent_id`` on daemon connections, untagged on direct ones."""

    agent_id: str | None = None

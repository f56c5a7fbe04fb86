"""The base of every command (PROTOCOL §5.1), shared by ``commands.py`` and ``daemon_commands.py``."""

from shard.protocol.base import WireModel


class CommandBase(WireModel):
    """Every command accepts an optional correlation ``id`` (R5.1.1)."""

    type: str
    id: str | None = None

"""The base of every command (PROTOCOL §5.1), shared by ``agent_commands.py``, ``commands.py`` and
``daemon_commands.py``."""

from shard.protocol.base import WireModel


class CommandBase(WireModel):
    """Every command accepts an optional correlation ``id`` (R5.1.1)."""

    type: str
    id: str | None = None


def by_type(*models: type[CommandBase]) -> dict[str, type[CommandBase]]:
    """Each model by its wire ``type``."""
    return {m.model_fields["type"].default: m for m in models}

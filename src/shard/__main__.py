"""``python -m shard`` is the ``shard`` command."""

from shard.cli.main import entry

entry()

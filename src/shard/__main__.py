"""``python -m shard`` is the ``shard`` command."""

from shard.cli.start import entry

entry()

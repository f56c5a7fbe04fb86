"""L3: the ``shard`` command."""

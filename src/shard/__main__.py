"""``python -m shard`` is the ``shard`` command."""

from shard.cli.main import main

raise SystemExit(main())

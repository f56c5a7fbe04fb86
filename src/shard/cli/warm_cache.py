"""``python -m shard.cli.warm_cache``: compile the dataclass methods of Shard's start paths once and
keep them (``shard._dataclass_code``, which ``shard.cli.main`` and the template install), even under
``PYTHONDONTWRITEBYTECODE`` — run by ``scripts/bootstrap.sh`` after it byte-compiles the sources, as
an editable install ships no bytecode.

The paths: the warm template's imports (a runtime forked from it defines nothing more), the daemon's,
and a direct ``shard run``'s. Prints how many texts it compiled and kept.
"""

from __future__ import annotations

import importlib
import sys

from shard import _dataclass_code
from shard.daemon.early_template import TEMPLATE_IMPORTS

START_PATHS = (*TEMPLATE_IMPORTS, "shard.cli.daemon_serve", "shard.daemon.server", "shard.cli.run")


def main() -> int:
    _dataclass_code.install()
    for name in START_PATHS:
        importlib.import_module(name)
    hits, misses = _dataclass_code.counts()
    wrote = _dataclass_code.save(force=True)
    print(f"shard: {hits + misses} dataclass methods, {misses} compiled" + (" and kept" if wrote else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

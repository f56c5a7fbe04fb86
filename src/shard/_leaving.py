"""What a Shard process does on its way out: removes its temporary files, keeps the code it compiled
(``_dataclass_code``).

Every ``shard`` process leaves with ``os._exit`` (``cli.main.entry``, a forked runtime in
``cli.forkserver``): tearing the interpreter down costs a fraction of a second and does nothing
useful. ``atexit`` handlers never run then, so a temporary file or socket registered with ``atexit``
stayed in the temp dir for good: each sandboxed runtime left its empty file (``shard-empty-*``)
and its network proxy's folder (``shard-proxy-*``). Register such removals here instead: the ways
out call :func:`leave`, and an interpreter that does end normally (``main()`` run in-process) runs
it through ``atexit`` too. Stdlib only: the Ctrl-C handler imported first of all may call it.
"""

from __future__ import annotations

import atexit
import contextlib
from collections.abc import Callable

_steps: list[Callable[[], None]] = []


def on_leaving(step: Callable[[], None]) -> None:
    """Run ``step`` (which must be quick and never block) when this process leaves."""
    _steps.append(step)


def leave() -> None:
    """Run every step registered, latest first, each once; a step that fails is skipped."""
    while _steps:
        step = _steps.pop()
        with contextlib.suppress(Exception):
            step()


def forget() -> None:
    """Drop every step: for a forked child that becomes another process (its parent's files are its
    parent's to remove)."""
    _steps.clear()


atexit.register(leave)

"""Start-up timestamps for benchmarks (issue 31): with ``SHARD_TRACE`` set to the wall-clock time
(``time.time()``) at which the caller spawned the process, :func:`mark` writes one line to stderr,
``shard-trace PID LABEL +MS`` (milliseconds since that spawn, and the CPU milliseconds this process
used so far), and otherwise does nothing. Child processes inherit the variable, so one trace follows
a daemon, its warm template and the runtimes it forks. Stdlib only, nothing at import: it is on
every start-up path.
"""

from __future__ import annotations

import os
import sys
import time

_SPAWNED = os.environ.get("SHARD_TRACE")


def mark(label: str) -> None:
    if _SPAWNED is None:
        return
    try:
        since = (time.time() - float(_SPAWNED)) * 1000
    except ValueError:
        return
    cpu = time.process_time() * 1000
    try:
        sys.stderr.write(f"shard-trace {os.getpid()} {label} +{since:.1f} cpu {cpu:.1f}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

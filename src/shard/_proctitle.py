"""A process's title as ps shows it (``/proc/self/cmdline``), rewritten in place: a forked runtime
or template shows the command line a spawned one would. Stdlib only (``ctypes`` when used)."""

from __future__ import annotations

import contextlib
import os


def retitle(argv: list[str]) -> None:
    """Make ``/proc/self/cmdline`` (what ps, pgrep and pkill read) the spawned runtime's command line,
    written over the template's own argument area (the daemon pads it with 8 KiB of spaces). A
    command line longer than that is cut (its tail is lost from ps, nothing else). Written in place
    through ctypes, not ``/proc/self/mem``: the template is non-dumpable, and a non-dumpable process
    of an ordinary user may not open its own ``/proc/self/mem`` (it belongs to root then)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end: fields 48, 49 of stat(5)
        if not 0 < start < end:
            return
        import ctypes

        data = b"\0".join(os.fsencode(a) for a in argv)[: end - start - 1]
        ctypes.memmove(start, data + b"\0" * (end - start - len(data)), end - start)

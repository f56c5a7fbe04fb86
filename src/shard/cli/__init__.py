"""L3: the ``shard`` command.

Imported first on the command's start-up path (before any heavy module): Ctrl-C from here until a
command installs its own handling ends the process quietly with 130 — never a traceback of whatever
import it interrupted. A SIGINT that was ignored when Shard started (a background job) stays ignored.

The handler is set through ``_signal``, the interpreter's built-in half of :mod:`signal`: importing
``signal`` itself loads ``enum`` first (25 ms here, far more on a loaded machine), and a Ctrl-C in
that window was a traceback.
"""

import _signal
import os
import sys


def quit_on_ctrl_c(_signum: int, _frame: object) -> None:
    leaving = sys.modules.get("shard._leaving")  # its removals, if anything registered one yet
    if leaving is not None:
        leaving.leave()
    os._exit(130)


if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, quit_on_ctrl_c)

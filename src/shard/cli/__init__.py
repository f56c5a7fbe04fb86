"""L3: the ``shard`` command.

Imported first on the command's start-up path (before any heavy module): Ctrl-C from here until a
command installs its own handling ends the process quietly with 130 — never a traceback of whatever
import it interrupted. A SIGINT that was ignored when Shard started (a background job) stays ignored.
"""

import os
import signal

if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, lambda _signum, _frame: os._exit(130))

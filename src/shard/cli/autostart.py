"""A daemon for ``shard`` alone in a terminal: the one serving SHARD_HOME, or one started now in the
background — from this shell, so its agents get this shell's provider keys — saying so in one line:
how it was started, where its output goes, how to stop it.

Its output (the enrollment link included) goes to ``$SHARD_HOME/daemon.log``, created 0600 in the
0700 home: nobody else can read the link and race the owner to it. It listens on the usual port,
7433, unless something else does (another home's daemon): then on any free one, which its log names.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from shard._home import HomeError, open_private, prepare_home
from shard._python import module_argv
from shard.cli.run_daemon import daemon_socket

DEFAULT_PORT = 7433  # shard daemon's --port
START_WAIT = 60.0  # a cold start imports for a second or two; a loaded machine takes longer


class AutostartError(Exception):
    """No daemon could be started; the message says why, in one line."""


def ensure_daemon(home: Path) -> str | None:
    """Make sure a daemon serves ``home``: None when one already did, else the line that says one
    was started. Raises AutostartError when none could be."""
    if daemon_socket(home) is not None:
        return None
    try:
        prepare_home(home)
        log = home / "daemon.log"
        fd = open_private(log, os.O_WRONLY | os.O_APPEND)
    except (HomeError, OSError) as exc:
        raise AutostartError(f"cannot start a daemon for {home}: {exc}") from None
    command = ["shard", "daemon"] if _free(DEFAULT_PORT) else ["shard", "daemon", "--port", "0"]
    try:
        proc = subprocess.Popen(
            module_argv(*command, "--home", str(home)),
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # not this terminal's: Ctrl-C here, or closing it, leaves it running
        )
    finally:
        os.close(fd)
    deadline = time.monotonic() + START_WAIT
    while daemon_socket(home) is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            last = _last_line(log)
            raise AutostartError(f"the daemon did not start ({last or 'no output'}); its log: {log}")
        time.sleep(0.05)
    return (
        f"shard: started a daemon for {home} in the background ({' '.join(command)}, pid {proc.pid}); "
        f"its log: {log}; stop it with: kill {proc.pid}"
    )


def _free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` now."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""

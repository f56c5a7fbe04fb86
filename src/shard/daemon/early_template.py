"""The warm-runtime template, started before the daemon's own imports (issue 31).

The daemon's imports (the broker, the protocol models, the web front) and the template's (the
runtime, the tools) each take a few hundred milliseconds of one core. Started one after the other,
a fresh daemon's first ``agent.create`` waited for both; so ``shard daemon`` starts the template
first — before it reads config.toml or takes its keys, with a plain ``subprocess.Popen``, before
asyncio is even imported — and the :class:`~shard.daemon.warm_pool.WarmPool` adopts it once the
loop runs. Its environment is an allowlist (:func:`template_env`): the keys are still in the
daemon's environment then, and a template needs none of the user's variables (each runtime's own
environment comes with its fork request). Stdlib only: this module is imported on the way there.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import NamedTuple

TITLE_ROOM = 8192  # bytes of argument area each runtime's own command line is written over


def template_argv(fd: int, key_names: list[str]) -> list[str]:
    """``python -m shard.cli.forkserver FD KEYS PADDING`` (the padding: ``forkserver._retitle``)."""
    return [sys.executable, "-m", "shard.cli.forkserver", str(fd), ",".join(key_names), " " * TITLE_ROOM]


# What a template's own interpreter, imports and SDK warm-up read: the locale, where Python, its
# shared library and temporary files are, the CA bundle its shared TLS context loads, the trace.
_TEMPLATE_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH"}
    | {"SSL_CERT_FILE", "SSL_CERT_DIR", "SHARD_TRACE"}
)
_TEMPLATE_PREFIXES = ("LC_", "PYTHON")


def template_env(home: Path) -> dict[str, str]:
    """A template's environment: named variables only, so no key or other secret of the user's
    environment is ever in it, whenever it starts."""
    env = {
        k: v for k, v in os.environ.items() if k in _TEMPLATE_VARIABLES or k.startswith(_TEMPLATE_PREFIXES)
    }
    env["SHARD_HOME"] = str(home)
    return env


def key_names() -> list[str]:
    """The names of the keys in this environment (a template preloads the SDKs of the built-in
    providers they reach); names only, before the daemon takes the keys out of its environment."""
    return sorted(name for name, value in os.environ.items() if name.endswith("_API_KEY") and value)


def runtime_env(home: Path, socket_path: Path, *, subagents: bool = True) -> dict[str, str]:
    """A runtime's environment; the daemon's socket in it is what offers the subagent tools."""
    env = {**os.environ, "SHARD_HOME": str(home)}
    if subagents:
        env["SHARD_DAEMON_SOCKET"] = str(socket_path)
    return env


class EarlyTemplate(NamedTuple):
    """A template process and the daemon's end of its control socket, not yet adopted by a pool."""

    proc: subprocess.Popen[bytes]
    sock: socket.socket

    def close(self) -> None:
        """Let it go: it exits once it reads the end of its socket."""
        with contextlib.suppress(OSError):
            self.sock.close()


def start_early(env: dict[str, str], key_names: list[str]) -> EarlyTemplate | None:
    """Start a template now (None when it cannot be started: the pool then builds its own)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        proc = subprocess.Popen(
            template_argv(theirs.fileno(), key_names),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=env,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )
    except OSError:
        ours.close()
        return None
    finally:
        theirs.close()
    # Not a child asyncio watches: a thread reaps it whenever it ends, so it never lingers a zombie.
    threading.Thread(target=proc.wait, name="shard-template-reaper", daemon=True).start()
    return EarlyTemplate(proc, ours)

"""Spawning the warm template with nothing imported but ``os`` and ``sys`` (issue 31).

A fresh daemon's first answer waits for the later of two imports, each most of a core's quarter
second: the daemon's own and its template's. The template is therefore started first, by
``shard.cli.start`` — and anything imported before it starts delays it: ``subprocess``, ``socket``,
``pathlib``, ``threading`` and ``traceback`` took ~25 ms. So this module spawns it with
``os.posix_spawn`` on a socketpair from ``_socket``, and ``early_template`` wraps the result (the
process, its socket, the thread that reaps it) once the daemon has imported what that needs.

The child is what ``subprocess.Popen(..., stdin=DEVNULL, stdout=DEVNULL, pass_fds=(fd,),
start_new_session=True)`` made: its own session, stdin and stdout on /dev/null, stderr shared, no
descriptor of the daemon's but its end of the socket (an inheritable one is closed in the child;
every other one is close-on-exec), SIGPIPE and SIGXFSZ at their defaults. Its environment is an
allowlist (:func:`template_env`): the keys are still in the daemon's environment then.
"""

from __future__ import annotations

import os
import sys

from shard._python import module_argv

TITLE_ROOM = 8192  # bytes of argument area each runtime's own command line is written over


def template_argv(fd: int, key_names: list[str]) -> list[str]:
    """``python -P -m shard.cli.forkserver FD KEYS PADDING`` (the padding: ``shard._proctitle.retitle``)."""
    return module_argv("shard.cli.forkserver", str(fd), ",".join(key_names), " " * TITLE_ROOM)


# What a template's own interpreter, imports and SDK warm-up read: the locale, where Python, its
# shared library and temporary files are, the CA bundle its shared TLS context loads, the trace.
_TEMPLATE_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH"}
    | {"SSL_CERT_FILE", "SSL_CERT_DIR", "SHARD_TRACE"}
)
_TEMPLATE_PREFIXES = ("LC_", "PYTHON")


def template_env(home: str | os.PathLike[str]) -> dict[str, str]:
    """A template's environment: named variables only, so no key or other secret of the user's
    environment is ever in it, whenever it starts."""
    env = {
        k: v for k, v in os.environ.items() if k in _TEMPLATE_VARIABLES or k.startswith(_TEMPLATE_PREFIXES)
    }
    env["SHARD_HOME"] = os.fspath(home)
    return env


def key_names() -> list[str]:
    """The names of the keys in this environment (a template preloads the SDKs of the built-in
    providers they reach); names only, before the daemon takes the keys out of its environment."""
    return sorted(name for name, value in os.environ.items() if name.endswith("_API_KEY") and value)


def home_path(explicit: str | None) -> str:
    """``shard._home.shard_home`` without ``pathlib``: the same path, as a string."""
    raw = explicit or os.environ.get("SHARD_HOME") or "~/.shard"
    return os.path.realpath(os.path.expanduser(raw))


def spawn(env: dict[str, str], key_names: list[str]) -> tuple[int, int] | None:
    """Start a template: ``(pid, fd)`` with ``fd`` the daemon's end of its ``SOCK_SEQPACKET``
    socket; None when it cannot be started (the pool then builds its own)."""
    import _signal
    import _socket

    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    try:
        fd = theirs.fileno()
        os.set_inheritable(fd, True)
        actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        ]
        actions += [(os.POSIX_SPAWN_CLOSE, other) for other in _inheritable_fds() if other != fd]
        pid = os.posix_spawn(
            sys.executable,
            template_argv(fd, key_names),
            env,
            file_actions=actions,
            setsid=True,
            setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ),
        )
    except (OSError, NotImplementedError):  # NotImplementedError: a libc without setsid for it
        ours.close()
        return None
    finally:
        theirs.close()
    return pid, ours.detach()


def _inheritable_fds() -> list[int]:
    """This process's descriptors above stderr that an ``exec`` would keep (they came from its own
    parent: everything Python opens is close-on-exec)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        names = []
    found = []
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the listing's own descriptor, closed since
                pass
    return found


_started: tuple[str, tuple[int, int] | None] | None = None


def start_for_home(home: str | None) -> None:
    """The template of ``shard daemon --home HOME``, started by ``shard.cli.start`` before the
    command's own imports; ``early_template.take_started`` hands it to ``main_daemon``."""
    global _started
    from shard._trace import mark

    path = home_path(home)
    mark("daemon: template")
    _started = (path, spawn(template_env(path), key_names()))


def take_spawned() -> tuple[str, tuple[int, int] | None] | None:
    """What :func:`start_for_home` started (its home, and ``(pid, fd)`` or None), once."""
    global _started
    started, _started = _started, None
    return started

"""The warm-runtime template, started before the daemon's own imports (issue 31).

The daemon's imports (the broker, the protocol models, the web front) and the template's (the
runtime, the tools) each take a few hundred milliseconds of one core. Started one after the other,
a fresh daemon's first ``agent.create`` waited for both; so ``shard daemon`` starts the template
first — before it reads config.toml or takes its keys, with a plain ``subprocess.Popen``, before
asyncio is even imported — and the :class:`~shard.daemon.warm_pool.WarmPool` adopts it once the
loop runs. Its environment is an allowlist (:func:`template_env`): the keys are still in the
daemon's environment then, and a template needs none of the user's variables (each runtime's own
environment comes with its fork request). Stdlib only: this module is imported on the way there.

A daemon that already holds every module a template imports — only one forked from a template
itself, as the test kit forks its daemons (``shard.testing.forked``); ``shard daemon`` imports none
of them before here — forks its template instead (:func:`fork_early`): the same process a spawn
gives, minus an interpreter start and ~0.8 CPU-s of imports.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import socket
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import NamedTuple, NoReturn, Protocol

TITLE_ROOM = 8192  # bytes of argument area each runtime's own command line is written over


def template_argv(fd: int, key_names: list[str]) -> list[str]:
    """``python -m shard.cli.forkserver FD KEYS PADDING`` (the padding: ``shard._proctitle.retitle``)."""
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


class TemplateProc(Protocol):
    """What the pool uses of an early template's process: a ``Popen`` or a :class:`ForkedTemplate`."""

    @property
    def pid(self) -> int: ...

    def wait(self) -> int: ...

    def kill(self) -> None: ...


class EarlyTemplate(NamedTuple):
    """A template process and the daemon's end of its control socket, not yet adopted by a pool."""

    proc: TemplateProc
    sock: socket.socket

    def close(self) -> None:
        """Let it go: it exits once it reads the end of its socket."""
        with contextlib.suppress(OSError):
            self.sock.close()


def start_early(env: dict[str, str], key_names: list[str]) -> EarlyTemplate | None:
    """Start a template now (None when it cannot be started: the pool then builds its own)."""
    if holds_template_imports():
        return fork_early(env, key_names)
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


_started: tuple[Path, EarlyTemplate | None] | None = None


def start_for_home(home: str | None) -> None:
    """The template of ``shard daemon --home HOME``, started by ``shard.cli.start`` before the
    command's own imports; :func:`take_started` hands it to ``main_daemon``."""
    global _started
    from shard._home import shard_home
    from shard._trace import mark

    path = shard_home(home)
    mark("daemon: template")
    _started = (path, start_early(template_env(path), key_names()))


def take_started(home: Path, *, cold_start: bool) -> tuple[EarlyTemplate | None] | None:
    """What :func:`start_for_home` started, when it was for ``home`` and the daemon warm-starts:
    ``(template,)`` (None inside: it could not start). Otherwise None, and one started is let go
    (it exits at the end of its socket)."""
    global _started
    started, _started = _started, None
    if started is None:
        return None
    path, early = started
    if cold_start or path != home:
        if early is not None:
            early.close()
        return None
    return (early,)


# What a template imports before it says it is ready (``shard.cli.forkserver._preload`` imports
# these, in this order): a runtime then serves its first prompt without importing anything more
TEMPLATE_IMPORTS = (
    "shard.agent.providers.anthropic",
    "shard.agent.providers.openai",
    "shard.agent.providers.scripted",
    "shard.agent.runtime",
    "shard.agent.stdio",
    "shard.cli.agent",
    "shard.cli.main",
    "shard.agent.providers.sdk",
)


def holds_template_imports() -> bool:
    """Whether a fork of this process is a template as a spawn makes it: every module it imports is
    here already, and no other thread is (a fork copies none, and a lock one holds stays held)."""
    return all(name in sys.modules for name in TEMPLATE_IMPORTS) and threading.active_count() == 1


class ForkedTemplate:
    """A template forked by this process: what the pool uses of a ``Popen`` (``pid``, ``wait``,
    ``kill``), waited on by more than one thread like one."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._waiting = threading.Lock()

    def wait(self) -> int:
        with self._waiting:
            if self.returncode is None:
                try:
                    _, status = os.waitpid(self.pid, 0)
                    self.returncode = os.waitstatus_to_exitcode(status)
                except ChildProcessError:  # reaped elsewhere: its code is not known, as with Popen
                    self.returncode = 0
            return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, 9)


def fork_early(env: dict[str, str], key_names: list[str]) -> EarlyTemplate | None:
    """The template as a fork of this process (``holds_template_imports``): its own session, stdin and
    stdout on /dev/null, no descriptor but stderr and its socket, ``env`` its whole environment, and
    then what ``python -m shard.cli.forkserver`` runs, as ps shows it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None
    if pid == 0:
        _become_template(theirs.fileno(), env, key_names)
    theirs.close()
    proc = ForkedTemplate(pid)
    threading.Thread(target=proc.wait, name="shard-template-reaper", daemon=True).start()
    return EarlyTemplate(proc, ours)


def _become_template(fd: int, env: dict[str, str], key_names: list[str]) -> NoReturn:
    """In the forked child: never returns."""
    try:
        from shard import _leaving
        from shard._proctitle import retitle

        _leaving.forget()  # the daemon's removals are the daemon's
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.closerange(3, fd)
        os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))
        os.environ.clear()
        os.environ.update(env)
        argv = template_argv(fd, key_names)
        retitle(argv[:-1])
        if sys.path and not sys.flags.safe_path:
            sys.path[0] = os.getcwd()  # what ``python -m`` puts first, where a ``-c`` parent had ""
        # What ``python -m shard.cli.forkserver ARGS`` runs (it leaves with ``os._exit``)
        sys.argv = [argv[2], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    except BaseException:  # said on its stderr, like a crash of a spawned one
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(1)  # the template's own way out is os._exit: only a failure comes here

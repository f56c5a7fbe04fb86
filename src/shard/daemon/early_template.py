"""The warm-runtime template, started before the daemon's own imports (issue 31).

The daemon's imports (the broker, the protocol models, the web front) and the template's (the
runtime, the tools) each take a few hundred milliseconds of one core. Started one after the other,
a fresh daemon's first ``agent.create`` waited for both; so ``shard daemon`` starts the template
first — before it parses its command line, reads config.toml or takes its keys
(``template_spawn``, from ``shard.cli.start``) — and the :class:`~shard.daemon.warm_pool.WarmPool`
adopts it once the loop runs (:func:`take_started`). Its environment is an allowlist
(``template_spawn.template_env``): the keys are still in the daemon's environment then, and a
template needs none of the user's variables (each runtime's own environment comes with its fork
request). Stdlib only.

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
import sys
import threading
import traceback
from pathlib import Path
from typing import NamedTuple, NoReturn, Protocol

from shard._python import module_and_args
from shard.daemon import template_spawn


def runtime_env(home: Path, socket_path: Path, *, subagents: bool = True) -> dict[str, str]:
    """A runtime's environment; the daemon's socket in it is what offers the subagent tools."""
    env = {**os.environ, "SHARD_HOME": str(home)}
    if subagents:
        env["SHARD_DAEMON_SOCKET"] = str(socket_path)
    return env


class TemplateProc(Protocol):
    """What the pool uses of an early template's process: a :class:`ChildTemplate` (or a ``Popen``)."""

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
    return _wrap(template_spawn.spawn(env, key_names))


def _wrap(spawned: tuple[int, int] | None) -> EarlyTemplate | None:
    """A spawned template's process and socket, with the thread that reaps it: not a child asyncio
    watches, so it never lingers a zombie, whenever it ends."""
    if spawned is None:
        return None
    pid, fd = spawned
    proc = ChildTemplate(pid, forked=False)
    threading.Thread(target=proc.wait, name="shard-template-reaper", daemon=True).start()
    return EarlyTemplate(proc, socket.socket(fileno=fd))


def take_started(home: Path, *, cold_start: bool) -> tuple[EarlyTemplate | None] | None:
    """What ``template_spawn.start_for_home`` started, when it was for ``home`` and the daemon
    warm-starts: ``(template,)`` (None inside: it could not start). Otherwise None, and one started
    is let go (it exits at the end of its socket)."""
    spawned = template_spawn.take_spawned()
    if spawned is None:
        return None
    path, started = spawned
    early = _wrap(started)
    if cold_start or Path(path) != home:
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


class ChildTemplate:
    """A template this process started (``forked``: as a fork of itself, else spawned): what the
    pool uses of a ``Popen`` (``pid``, ``wait``, ``kill``), waited on by more than one thread like
    one."""

    def __init__(self, pid: int, *, forked: bool) -> None:
        self.pid = pid
        self.forked = forked
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
    proc = ChildTemplate(pid, forked=True)
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
        argv = template_spawn.template_argv(fd, key_names)
        retitle(argv[:-1])
        if sys.path and not sys.flags.safe_path:
            del sys.path[0]  # as ``python -P`` leaves it: no script's or current folder first
        # What ``python -P -m shard.cli.forkserver ARGS`` runs (it leaves with ``os._exit``)
        sys.argv = module_and_args(argv)
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    except BaseException:  # said on its stderr, like a crash of a spawned one
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(1)  # the template's own way out is os._exit: only a failure comes here

"""Warm starts (issue 16): runtimes forked from a pre-imported template instead of spawned cold.

A new ``shard agent --stdio`` costs an interpreter start and ~1 s of imports; a fork of the template
(``shard.cli.forkserver``) has them all already, so it reaches ``hello`` in a few milliseconds. The
pool keeps one template per configuration: before each launch it compares a fingerprint of what
decides the template's imports (``config.toml``'s identity and the provider keys the daemon holds);
when that changed, the template is retired and a new one built. A retired template reports the
children it has reaped and exits at once — it would otherwise keep its 40-odd MB for as long as its
runtimes live; the runtimes still running become the daemon's children (``children.Subreaper``),
whose ends, with their status, pidfds tell.

Whenever no template can serve — it is still importing past the wait, it died, it failed three times
in a row, or the pool is off — the runtime is spawned as before: warm starts only ever make a start
faster, never different or impossible.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import json
import os
import socket
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shard.daemon.children import Child, ForkedChild, Subreaper, pipe_streams, spawn
from shard.daemon.early_template import EarlyTemplate, TemplateProc
from shard.daemon.template_spawn import template_argv

READY_TIMEOUT = 60.0
LEAVE_TIMEOUT = 10.0  # a retired template that has not exited by then is killed
_MAX_FAILURES = 3
Fingerprint = tuple[object, ...]


class TemplateGone(Exception):
    """The template ended (or could not start) before answering."""


class Template:
    """One template process and the daemon's end of its control socket."""

    def __init__(
        self,
        fingerprint: Fingerprint,
        on_gone: Callable[[Template], None],
        subreaper: Subreaper | None = None,
    ) -> None:
        self.fingerprint = fingerprint
        self.retired = False
        self._subreaper = subreaper or Subreaper()
        self._leaving: asyncio.Future[None] | None = None  # retired, exiting; its children adopted after
        self.children: dict[int, ForkedChild] = {}
        # A child that exits at once (a runtime refusing a broken config) can be reported while its
        # pipes are still being wrapped (``fork`` awaits): its exit waits here for it.
        self._early_exits: dict[int, int | None] = {}
        self.proc: asyncio.subprocess.Process | TemplateProc | None = None
        self._on_gone = on_gone
        self._loop = asyncio.get_running_loop()
        self._ready: asyncio.Future[None] = self._loop.create_future()
        self._replies: deque[asyncio.Future[dict[str, Any]]] = deque()
        self._sock: socket.socket | None = None
        self._gone_told = False

    async def start(self, env: dict[str, str], key_names: list[str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *template_argv(theirs.fileno(), key_names),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                env=env,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError:
            ours.close()
            self._gone()
            return
        finally:
            theirs.close()
        self.adopt(self.proc, ours)

    def adopt(self, proc: asyncio.subprocess.Process | TemplateProc, sock: socket.socket) -> None:
        """Serve through a template already started (``early_template``, or :meth:`start`)."""
        self.proc = proc
        sock.setblocking(False)
        self._sock = sock
        self._loop.add_reader(sock.fileno(), self._readable)

    async def ready(self, within: float) -> bool:
        if self._ready.done() and not self._ready.cancelled():  # every launch but the first few
            return self._ready.exception() is None  # wait_for would take loop turns to say so
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), within)
        except (TimeoutError, TemplateGone):
            return False
        return True

    @property
    def alive(self) -> bool:
        return self._sock is not None

    async def fork(self, argv: list[str], env: dict[str, str], keys: int | None) -> Child:
        """A new runtime, as ``argv`` (``python -m shard ARGS``) would start it, forked from the
        template."""
        if self._sock is None:
            raise TemplateGone
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs = [stdin_r, stdout_w, stderr_w] + ([] if keys is None else [keys])
        ours = (stdin_w, stdout_r, stderr_r)
        request = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()
        reply: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        try:
            try:
                fds = array.array("i", theirs).tobytes()
                self._sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                self._replies.append(reply)
            finally:
                for fd in theirs[:3]:
                    os.close(fd)  # the child's ends travel in the message; the key pipe is the caller's
            answer = await reply
            if "pid" not in answer:
                raise TemplateGone(answer.get("error"))
        except (OSError, TemplateGone) as exc:
            for fd in ours:
                os.close(fd)
            raise TemplateGone(*exc.args) from None
        child = ForkedChild(answer["pid"], *await pipe_streams(stdin_w, stdout_r, stderr_r))
        if child.pid in self._early_exits:
            child.exited(self._early_exits.pop(child.pid))
            return child
        self.children[child.pid] = child
        if not self.alive and (self._leaving is None or self._leaving.done()):
            self._let_children_go()  # the template died (or left) between its answer and here
        return child

    def retire(self) -> None:
        """No new children, and the template goes now: told by its socket's write side shut, it
        reports the children it has reaped and exits. While it does, the daemon is a subreaper, so
        the runtimes still running become the daemon's children; once the template has exited, a
        pidfd watches each (``ForkedChild.watch``): their ends, with their status, are seen as
        before. Not earlier: a child that ends while the template exits is reparented only once the
        template is gone."""
        if self.retired:
            return
        self.retired = True
        if (not self.children and not self._replies) or self._sock is None or self.proc is None:
            self.close()
            return
        self._subreaper.hold()
        try:
            self._sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._subreaper.release()
            self.close()
            return
        self._leaving = asyncio.ensure_future(self._leave(self.proc))

    async def _leave(self, proc: asyncio.subprocess.Process | TemplateProc) -> None:
        try:
            try:
                await asyncio.wait_for(self._exited(), LEAVE_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await self._exited()
        finally:
            self._subreaper.release()
            self._gone()
            self._let_children_go()

    def close(self) -> None:
        """Let the template go (its children live on; their ends are told by pidfds)."""
        self.retired = True
        self._gone()

    async def wait_closed(self) -> None:
        """Close, and wait for the template process to exit."""
        self.close()
        await self._exited()

    async def _exited(self) -> None:
        """Wait for the template process to exit (an early template's is waited on a thread)."""
        if isinstance(self.proc, asyncio.subprocess.Process):
            await self.proc.wait()
        elif self.proc is not None:
            await asyncio.to_thread(self.proc.wait)

    def _readable(self) -> None:
        assert self._sock is not None
        while self._sock is not None:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._gone()
                return
            with contextlib.suppress(ValueError):
                self._message(json.loads(data))

    def _message(self, message: dict[str, Any]) -> None:
        if message.get("ready"):
            if not self._ready.done():
                self._ready.set_result(None)
        elif "exit" in message:
            child = self.children.pop(message["exit"], None)
            if child is not None:
                child.exited(message.get("code"))
            else:  # its fork is still being answered (``fork``)
                self._early_exits[message["exit"]] = message.get("code")
        elif self._replies:
            self._replies.popleft().set_result(message)

    def _gone(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(ValueError, RuntimeError):
                self._loop.remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None
        if not self._ready.done():
            self._ready.set_exception(TemplateGone())
            self._ready.exception()  # retrieved: a template that never came up is not an error
        while self._replies:
            self._replies.popleft().set_exception(TemplateGone())
        if self._leaving is None:  # a leaving template's children are watched once it has exited
            self._let_children_go()
        if not self._gone_told:
            self._gone_told = True
            self._on_gone(self)

    def _let_children_go(self) -> None:
        for child in self.children.values():
            child.watch()
        self.children.clear()


class WarmPool:
    """Launches runtimes: forked from the current template when there is one, spawned otherwise."""

    def __init__(
        self,
        config_path: Path,
        env: Callable[[], dict[str, str]],
        key_names: Callable[[], list[str]],
        *,
        enabled: bool = True,
        ready_timeout: float = READY_TIMEOUT,
        early: EarlyTemplate | None = None,
    ) -> None:
        self.enabled = enabled
        self._early = early  # started before the daemon's imports: the first template, once adopted
        self._config_path = config_path
        self._env = env
        self._key_names = key_names
        self._ready_timeout = ready_timeout
        self._current: Template | None = None
        self._subreaper = Subreaper()
        self._failures = 0
        self._closed = False
        self._tasks: set[asyncio.Future[Any]] = set()

    def fingerprint(self) -> Fingerprint:
        """What decides the template's imports: the config file's identity, the keys held."""
        try:
            st = self._config_path.stat()
            config: tuple[int, ...] = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            config = ()
        return (config, tuple(sorted(self._key_names())))

    def start(self) -> None:
        """Build the first template in the background (at daemon start), or adopt the early one."""
        if self.enabled:
            self._template()
        elif self._early is not None:
            self._early.close()
            self._early = None

    async def launch(self, argv: list[str], env: dict[str, str], keys: int | None) -> Child:
        template = self._template()
        if template is not None and await template.ready(self._ready_timeout):
            try:
                return await template.fork(argv, env, keys)
            except TemplateGone:
                pass  # a new one is built for the next launch; this one is spawned
        return await spawn(argv, env, keys)

    def close(self) -> None:
        self._closed = True
        if self._early is not None:
            self._early.close()
            self._early = None
        if self._current is not None:
            self._current.close()
            self._current = None

    @property
    def template_pid(self) -> int | None:
        """The current template's pid (None while there is none)."""
        current = self._current
        return current.proc.pid if current is not None and current.proc is not None else None

    def _template(self) -> Template | None:
        if not self.enabled or self._closed or self._failures >= _MAX_FAILURES:
            return None
        fingerprint = self.fingerprint()
        current = self._current
        if current is not None and current.alive and current.fingerprint == fingerprint:
            return current
        if current is not None:
            current.retire()
        template = Template(fingerprint, self._gone, self._subreaper)
        self._current = template
        task = asyncio.ensure_future(self._start(template))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return template

    async def _start(self, template: Template) -> None:
        early, self._early = self._early, None
        if early is not None:
            template.adopt(early.proc, early.sock)
        else:
            await template.start(self._env(), self._key_names())
        if await template.ready(self._ready_timeout):
            self._failures = 0
        else:
            template.close()

    def _gone(self, template: Template) -> None:
        if template is self._current:
            self._current = None
            if not template.retired:
                self._failures += 1
                if self._failures == _MAX_FAILURES:
                    sys.stderr.write(
                        "shard daemon: the warm-runtime template failed to start three times; "
                        "runtimes are spawned cold from now on\n"
                    )

"""Runtimes and daemons for tests, forked from warm templates (one of each kind per test process), as
the daemon forks its runtimes.

A cold ``shard agent --stdio`` costs its interpreter and every import (~0.3 CPU-s); the suite
started ~300 of them and is CPU-bound on two cores. :class:`TestTemplate` is the daemon's own
template (``shard.cli.forkserver``), spoken to with blocking calls from any event loop (each test
has its own): a reader thread takes its replies and exit reports. :class:`ForkedProcess` has what
tests use of an ``asyncio.subprocess.Process`` — pid, the three pipes, ``returncode``, ``wait``,
signals — for a child the template reaps and reports.

A forked child keeps the template's imports and ``sys.path``: ``AgentProcess.start`` and
``DaemonProcess.start`` fork only when nothing would differ from a cold start (no umask, no
``PYTHON*`` variable of the test's own; for a daemon, no key: see :func:`forkable`).

Daemons come from a second template, :data:`DAEMON`: the same forkserver with the daemon's own
modules imported first (~0.3 CPU-s a cold daemon pays before it listens, and the suite starts
hundreds). Runtimes keep a template without them, so a runtime's imports are what the daemon's are.
``shard acp`` has a third, :data:`ACP` (its SDK's schema: ~1 CPU-s before it answers ``initialize``).
"""

from __future__ import annotations

import array
import asyncio
import atexit
import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any

from shard._python import module_and_args
from shard.daemon.template_spawn import template_argv, template_env

READY_TIMEOUT = 120.0

RUNTIME: tuple[str, ...] = ()
# What ``shard daemon`` imports before it listens, and on its first commands (its server and core)
DAEMON: tuple[str, ...] = ("shard.cli.daemon", "shard.cli.daemon_serve", "shard.daemon.server")
# What ``shard acp`` imports before it reads its first line: the ACP SDK's schema is most of it
ACP: tuple[str, ...] = ("shard.cli.acp", "shard.acp")


class TemplateUnavailable(Exception):
    """The template could not start or serve: the caller spawns cold."""


class ForkedProcess:
    """A runtime forked by the template: what tests use of an asyncio subprocess."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader) -> None:
        self.pid = pid
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.stderr: asyncio.StreamReader | None = None
        self.returncode: int | None = None
        self._exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._watch: asyncio.Future[None] | None = None

    def _exit(self, code: int) -> None:
        self.returncode = code
        if not self._exited.done():
            self._exited.set_result(code)

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def _orphaned(self) -> None:
        """Its template is gone, so nothing will report its exit: watch for its pid to go (init
        reaps it), and report -1 then (its code is not known). A test is never left waiting."""

        async def watch() -> None:
            while True:
                try:
                    os.kill(self.pid, 0)
                except ProcessLookupError:
                    self._exit(-1)
                    return
                except PermissionError:
                    pass
                await asyncio.sleep(0.05)

        if self.returncode is None:
            self._watch = asyncio.ensure_future(watch())

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(9)

    def terminate(self) -> None:
        self.send_signal(15)


class TestTemplate:
    """One template for this process's tests (of each kind: what it imports first), started at first
    use and left at exit."""

    __test__ = False  # not a test class, whatever pytest makes of its name
    _shared: dict[tuple[str, ...], TestTemplate] = {}

    def __init__(self, preload: tuple[str, ...] = RUNTIME) -> None:
        # its own empty home: what it preloads by config.toml is only ever a speed-up
        home = Path(tempfile.mkdtemp(prefix="shard-test-template-"))
        atexit.register(shutil.rmtree, home, True)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                _with_preload(template_argv(theirs.fileno(), []), preload),
                pass_fds=(theirs.fileno(),),
                env=template_env(home),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            theirs.close()
        self._sock = ours
        self._ready = threading.Event()
        self._lock = threading.Lock()  # a request and its place in the reply queue go together
        self._replies: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[dict[str, Any]]]] = deque()
        self._children: dict[int, tuple[asyncio.AbstractEventLoop, ForkedProcess]] = {}
        self._codes: dict[int, int] = {}  # exits reported before their child was registered
        self._gone = False
        threading.Thread(target=self._read, name="test-template", daemon=True).start()

    @classmethod
    def shared(cls, preload: tuple[str, ...] = RUNTIME) -> TestTemplate:
        template = cls._shared.get(preload)
        if template is not None and template._gone:
            template._proc.poll()  # reaped, if it has exited
        if template is None or template._gone:
            template = cls._shared[preload] = cls(preload)
        return template

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            try:
                message = json.loads(data) if data else None
            except ValueError:
                message = None  # not the template speaking: waiters are told it is gone, not left hanging
            if not isinstance(message, dict):
                break
            if message.get("ready"):
                self._ready.set()
            elif "exit" in message:
                self._reported(int(message["exit"]), int(message["code"]))
            else:
                with self._lock:
                    loop, future = self._replies.popleft()
                _settle(loop, future, message)
        self._ready.set()
        with self._lock:
            self._gone = True
            waiting = list(self._replies)
            self._replies.clear()
            orphans = list(self._children.values())
            self._children.clear()
            self._sock.close()
        for loop, future in waiting:
            _settle(loop, future, {"error": "the template is gone"})
        for loop, process in orphans:  # no one will report their exits now: they are watched instead
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(process._orphaned)

    def _reported(self, pid: int, code: int) -> None:
        with self._lock:
            child = self._children.pop(pid, None)
            if child is None:
                self._codes[pid] = code
                return
        loop, process = child
        with contextlib.suppress(RuntimeError):  # its test's loop is closed: nobody waits
            loop.call_soon_threadsafe(process._exit, code)

    async def fork(
        self, argv: list[str], env: dict[str, str], cwd: Path, limit: int, *, merge_stderr: bool = False
    ) -> ForkedProcess:
        """Fork ``argv`` (``python -m shard …``) with a pipe for each of its stdin, stdout and stderr;
        ``merge_stderr``: its stderr is its stdout pipe."""
        loop = asyncio.get_running_loop()
        if not self._ready.is_set():
            await loop.run_in_executor(None, self._ready.wait, READY_TIMEOUT)
        if self._gone or not self._ready.is_set():
            raise TemplateUnavailable("the test template did not start")
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        if merge_stderr:
            theirs = [stdin_r, stdout_w, stdout_w]
            ours = [stdin_w, stdout_r]
        else:
            stderr_r, stderr_w = os.pipe()
            theirs = [stdin_r, stdout_w, stderr_w]
            ours = [stdin_w, stdout_r, stderr_r]
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        request = json.dumps({"argv": argv, "env": env, "cwd": str(cwd)}).encode()
        try:
            with self._lock:
                self._sock.sendmsg(
                    [request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", theirs))]
                )
                self._replies.append((loop, future))
        except OSError as exc:
            for fd in ours:
                os.close(fd)
            raise TemplateUnavailable(str(exc)) from exc
        finally:
            for fd in set(theirs):
                with contextlib.suppress(OSError):
                    os.close(fd)
        reply = await future
        if "pid" not in reply:
            for fd in ours:
                os.close(fd)
            raise TemplateUnavailable(str(reply.get("error")))
        return await self._wrap(int(reply["pid"]), ours, limit)

    async def _wrap(self, pid: int, fds: list[int], limit: int) -> ForkedProcess:
        loop = asyncio.get_running_loop()
        stdin_w, stdout_r, *rest = fds
        stdout = asyncio.StreamReader(limit=limit)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stdout), os.fdopen(stdout_r, "rb", 0)
        )
        stderr = None
        if rest:
            stderr = asyncio.StreamReader(limit=limit)
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stderr), os.fdopen(rest[0], "rb", 0)
            )
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(stdin_w, "wb", 0)
        )
        process = ForkedProcess(pid, asyncio.StreamWriter(transport, protocol, None, loop), stdout)
        process.stderr = stderr
        with self._lock:
            code = self._codes.pop(pid, None)
            gone = self._gone  # the template left after it forked this child: nobody will report it
            if code is None and not gone:
                self._children[pid] = (loop, process)
        if code is not None:
            process._exit(code)
        elif gone:
            process._orphaned()
        return process


def _settle(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any) -> None:
    """Resolve ``future`` on its own loop, from the reader thread (a closed loop: nobody waits)."""

    def settle() -> None:
        if not future.done():
            future.set_result(value)

    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)


def forkable(env: dict[str, str] | None, umask: int | None, *, takes_keys: bool = False) -> bool:
    """Whether a fork is what a cold start would be: the umask and ``PYTHON*`` variables are read
    by an interpreter at its start, which a fork does not have. A process that ``takes_keys`` (a
    daemon, a one-shot ``shard run``) given a key is never forked: it scrubs the key from its
    initial environment block and turns non-dumpable, and a fork has the template's block and is
    non-dumpable already, so a test of that would prove nothing; nor given ``SHARD_TRACE``, whose
    marks count from the interpreter's start."""
    if umask is not None or os.environ.get("SHARD_TEST_COLD") == "1":
        return False
    names = list(env or {})
    if takes_keys and any(name == "SHARD_TRACE" or _secret_name(name) for name in names):
        return False
    # what it inherits: a provider key (a test's monkeypatch, or the machine's), never the CI's
    # other tokens, which no Shard process takes
    if takes_keys and any(name.endswith("_API_KEY") or name == "SHARD_TRACE" for name in os.environ):
        return False
    return not any(name.startswith("PYTHON") for name in names)


def _secret_name(name: str) -> bool:
    return any(word in name.upper() for word in ("KEY", "TOKEN", "SECRET", "PASSWORD"))


def _with_preload(argv: list[str], preload: tuple[str, ...]) -> list[str]:
    """The template's argv (``python -P -m shard.cli.forkserver ARGS``) importing ``preload`` first."""
    if not preload:
        return argv
    module, *args = module_and_args(argv)
    code = f"import runpy, {', '.join(preload)}; runpy.run_module({module!r}, run_name='__main__')"
    return [argv[0], "-P", "-c", code, *args]

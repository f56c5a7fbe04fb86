"""A runtime's process as the daemon holds it, however it was made: spawned (a fresh interpreter) or
forked by the warm-runtime template (``warm_pool.py``). :class:`RuntimeProcess` speaks to either
through the same few members: ``pid``, the three pipes, ``finished``, ``returncode`` and ``wait()``.

A forked child is the template's child, so its exit comes from the template that reaped it — until
the template leaves. A retired template exits at once (it would otherwise keep its memory for as long
as its runtimes live), and while it does the daemon is a child subreaper (:class:`Subreaper`): the
runtimes still running become the daemon's own children, and a pidfd tells their end, with their
status. A child of a template that died unexpectedly goes to init instead: the pidfd still tells
that it ended, its status is then unknown (``returncode`` stays None with ``finished`` set).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
from typing import Protocol

from shard import _secrets
from shard._prctl import PR_SET_CHILD_SUBREAPER, prctl

READ_LIMIT = 2**16  # the StreamReader's own buffer; RuntimeProcess reads in chunks with its own cap


class Child(Protocol):
    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> asyncio.StreamWriter | None: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    @property
    def stderr(self) -> asyncio.StreamReader | None: ...

    @property
    def finished(self) -> bool: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int | None: ...


class ForkedChild:
    """A runtime the template forked: its pipes are the daemon's ends of three ``os.pipe()``s."""

    def __init__(
        self,
        pid: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
    ) -> None:
        self.pid = pid
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.stderr: asyncio.StreamReader | None = stderr
        self.returncode: int | None = None
        self._ended = asyncio.get_running_loop().create_future()
        self._pidfd: int | None = None

    @property
    def finished(self) -> bool:
        return self._ended.done()

    async def wait(self) -> int | None:
        await asyncio.shield(self._ended)
        return self.returncode

    def exited(self, code: int | None) -> None:
        """The template reaped it (``code``), or it ended after the template (None: unknown)."""
        self._stop_watching()
        if not self._ended.done():
            self.returncode = code
            self._ended.set_result(None)

    def watch(self) -> None:
        """The template is gone: learn of this child's end from a pidfd instead — and reap it, with
        its status, when the daemon adopted it."""
        if self.finished or self._pidfd is not None:
            return
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:  # already gone (and reaped by whoever adopted it)
            self.exited(None)
            return
        asyncio.get_running_loop().add_reader(self._pidfd, self._ended_now)

    def _ended_now(self) -> None:
        assert self._pidfd is not None
        try:  # a pidfd is readable once its process has exited
            info = os.waitid(os.P_PIDFD, self._pidfd, os.WEXITED | os.WNOHANG)
        except ChildProcessError:  # not the daemon's child: whoever adopted it has its status
            info = None
        if info is None:
            self.exited(None)
        else:
            self.exited(info.si_status if info.si_code == os.CLD_EXITED else -info.si_status)

    def _stop_watching(self) -> None:
        if self._pidfd is not None:
            with contextlib.suppress(ValueError, RuntimeError):
                asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None


class SpawnedChild(ForkedChild):
    """A runtime started as a fresh process: the daemon's own child, watched by a pidfd from the
    start (which reaps it with its status)."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
    ) -> None:
        super().__init__(proc.pid, stdin, stdout, stderr)
        self._proc = proc

    def exited(self, code: int | None) -> None:
        if self._proc.returncode is None:  # reaped here: the Popen must not wait for it again
            self._proc.returncode = -1 if code is None else code
        super().exited(code)


class Subreaper:
    """Makes the daemon a child subreaper (``PR_SET_CHILD_SUBREAPER``) while anyone holds it: a
    process below it whose parent exits then becomes the daemon's child instead of init's. Held only
    while a retired template leaves, so that its runtimes come to the daemon; at other times an
    orphan (a tool's background process whose runtime ended) goes to init as before, and is no
    zombie of the daemon's for nobody to reap."""

    def __init__(self) -> None:
        self._holds = 0

    def hold(self) -> None:
        self._holds += 1
        if self._holds == 1:
            self._set(1)

    def release(self) -> None:
        self._holds -= 1
        if self._holds == 0:
            self._set(0)

    def _set(self, on: int) -> None:
        call = prctl()
        if call is not None:  # elsewhere than Linux: children go to init
            call(PR_SET_CHILD_SUBREAPER, on, 0, 0, 0)


async def pipe_streams(
    stdin_w: int, stdout_r: int, stderr_r: int
) -> tuple[asyncio.StreamWriter, asyncio.StreamReader, asyncio.StreamReader]:
    """asyncio streams over the daemon's ends of a child's pipes, forked or spawned (each fd taken over)."""
    loop = asyncio.get_running_loop()
    readers = []
    for fd in (stdout_r, stderr_r):
        reader = asyncio.StreamReader(limit=READ_LIMIT, loop=loop)
        await loop.connect_read_pipe(
            lambda r=reader: asyncio.StreamReaderProtocol(r, loop=loop),  # type: ignore[misc]
            os.fdopen(fd, "rb", buffering=0),
        )
        readers.append(reader)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop),
        os.fdopen(stdin_w, "wb", buffering=0),
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return writer, readers[0], readers[1]


async def spawn(argv: list[str], env: dict[str, str], keys: int | None) -> Child:
    """A fresh process; ``keys`` (the read end of the key pipe) is passed and named in its env.

    Not asyncio's subprocess: cancelled while it starts — a daemon leaving ``asyncio.run`` cancels
    every task at once, the one connecting the pipes too — its clean-up waited forever for pipes that
    were never connected. Here the process starts at once, its pipes are plain ones taken over as
    a forked child's are, and a pidfd tells its end (no watcher thread per runtime)."""
    proc, ours = _start(argv, env, keys)
    try:
        child = SpawnedChild(proc, *await pipe_streams(*ours))
    except BaseException:  # cancelled before it could be watched: it goes, and a thread reaps it
        proc.kill()
        threading.Thread(target=proc.wait, name="shard-spawn-reaper", daemon=True).start()
        raise
    child.watch()
    return child


def _start(
    argv: list[str], env: dict[str, str], keys: int | None
) -> tuple[subprocess.Popen[bytes], tuple[int, int, int]]:
    """The process, and the daemon's ends of its stdin, stdout and stderr pipes. (A fork and an exec:
    what asyncio's own subprocess does on the loop too.)"""
    if keys is not None:
        env = {**env, _secrets.FD_VARIABLE: str(keys)}
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    ours = (stdin_w, stdout_r, stderr_r)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=stdin_r,
            stdout=stdout_w,
            stderr=stderr_w,
            env=env,
            pass_fds=() if keys is None else (keys,),
            start_new_session=True,  # a signal to the daemon's group does not hit its runtimes
        )
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in (stdin_r, stdout_w, stderr_w):
            os.close(fd)
    return proc, ours

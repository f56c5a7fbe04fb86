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


class SpawnedChild:
    """A runtime started as a fresh ``shard agent --stdio`` process."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self._proc = proc
        self.pid = proc.pid
        self.stdin = proc.stdin
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def finished(self) -> bool:
        return self._proc.returncode is not None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    async def wait(self) -> int | None:
        return await self._proc.wait()


async def spawn(argv: list[str], env: dict[str, str], keys: int | None) -> Child:
    """A fresh process; ``keys`` (the read end of the key pipe) is passed and named in its env."""
    if keys is not None:
        env = {**env, _secrets.FD_VARIABLE: str(keys)}
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        pass_fds=() if keys is None else (keys,),
        start_new_session=True,  # a signal to the daemon's group does not hit its runtimes
    )
    return SpawnedChild(proc)


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
    """asyncio streams over the daemon's ends of a forked child's pipes (each fd is taken over)."""
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

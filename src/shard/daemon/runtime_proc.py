"""One Runtime generation: a ``shard agent --stdio`` child process, spoken to over its pipes.

``start()`` resolves once the child has sent ``hello`` and ``sync`` (ready) and raises
RUNTIME_START_FAILED otherwise; after that every line the child writes goes to ``on_line`` in order,
and ``on_exit`` is called once when it ends. The child's stderr is kept (its last lines) to explain
a crash.

Both pipes are read in chunks through ``shard.protocol.framing.LineBuffer`` with its cap: a line over
the cap is never held in memory; on stdout it reaches ``on_line`` as one :class:`Oversized` record
(the daemon answers whoever waited for it), on stderr it is kept as a note of its size. Nothing a
child writes can stop the read loop while the child runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from shard import _secrets
from shard._version import PROTOCOL_VERSION
from shard.daemon.children import Child, spawn
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, Oversized, Record

START_TIMEOUT = 60.0
STOP_GRACE = 10.0
_READ = 256 * 1024
_STDERR_LINE = 16 * 1024  # a stderr line explains a crash in its first words; longer ones are cut

# how a runtime process is made: argv, env, the key pipe's read end (or None) -> the child
Launcher = Callable[[list[str], dict[str, str], int | None], Awaitable[Child]]


class RuntimeProcess:
    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        on_line: Callable[[RuntimeProcess, Record], None],
        on_exit: Callable[[RuntimeProcess, int | None, str], None],
        *,
        max_line: int = DEFAULT_MAX_LINE_BYTES,
        launch: Launcher = spawn,
    ) -> None:
        self.argv = argv
        self._launch = launch
        self.env = env
        self.on_line = on_line
        self.on_exit = on_exit
        self.proc: Child | None = None
        self.hello: dict[str, Any] = {}
        self.sync: dict[str, Any] = {}
        self.stopping = False
        self._stderr: deque[str] = deque(maxlen=20)
        self._lines = LineBuffer(max_line)
        self._ready: deque[Record] = deque()  # records read but not yet taken (past sync, at start)
        self._reader: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Future[None] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def alive(self) -> bool:
        return self.proc is not None and not self.proc.finished and not self.stopping

    async def start(self) -> None:
        # Provider keys travel through a pipe the child reads once: never in its environment or
        # command line, which any process of the user can read through /proc.
        keys = _secrets.handoff()
        try:
            self.proc = await self._launch(self.argv, self.env, keys)
        except OSError as exc:
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED, f"cannot start the runtime: {exc.strerror}"
            ) from None
        finally:
            if keys is not None:
                os.close(keys)
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        try:
            hello = await asyncio.wait_for(self._read_json(), START_TIMEOUT)
            self._check_hello(hello)
            sync = await asyncio.wait_for(self._read_json(), START_TIMEOUT)
            self._check_sync(sync)
        except (TimeoutError, EOFError, ValueError) as exc:
            await self.kill()
            why = "; ".join(self._stderr) or type(exc).__name__
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED, f"the runtime did not become ready: {why}"
            ) from None
        except ShardError:
            await self.kill()
            raise
        self.hello, self.sync = hello, sync
        self._reader = asyncio.ensure_future(self._read_loop())

    @staticmethod
    def _check_hello(hello: dict[str, Any]) -> None:
        """The first message must be a hello in our major protocol version (PROTOCOL §7)."""
        if hello.get("type") != "hello":
            raise ShardError(
                ErrorCode.PROTOCOL_ERROR, f"the runtime's first message was {hello.get('type')!r}, not hello"
            )
        version = str(hello.get("protocol_version", ""))
        if version.split(".")[0] != PROTOCOL_VERSION.split(".")[0]:
            raise ShardError(
                ErrorCode.PROTOCOL_ERROR,
                f"the runtime speaks protocol {version or '?'}, this daemon {PROTOCOL_VERSION}",
            )

    @staticmethod
    def _check_sync(sync: dict[str, Any]) -> None:
        """``sync`` next; an ``error`` in its place is why the runtime could not start."""
        kind = sync.get("type")
        if kind == "error":
            message = str(sync.get("message"))
            if sync.get("code") == ErrorCode.SESSION_CORRUPT.value:
                raise ShardError(ErrorCode.SESSION_CORRUPT, message)
            raise ShardError(ErrorCode.RUNTIME_START_FAILED, f"the runtime did not become ready: {message}")
        if kind != "sync":
            raise ShardError(ErrorCode.PROTOCOL_ERROR, f"the runtime sent {kind!r} before its sync")

    async def _read_json(self) -> dict[str, Any]:
        """The next non-blank record of the start-up, as a JSON object."""
        while True:
            while not self._ready:
                if not await self._read_more():
                    raise EOFError
            record = self._ready.popleft()
            if isinstance(record, Oversized):
                raise ValueError(f"a line of {record.size} bytes, over the cap")
            if record.strip():
                break
        value = orjson.loads(record)
        if not isinstance(value, dict):
            raise ValueError("not an object")
        return value

    async def _read_more(self) -> bool:
        """Read one chunk of stdout into ``_ready``; False at end of stream."""
        assert self.proc is not None
        assert self.proc.stdout is not None
        chunk = await self.proc.stdout.read(_READ)
        self._ready.extend(self._lines.feed(chunk) if chunk else self._lines.close())
        return bool(chunk)

    async def _read_loop(self) -> None:
        assert self.proc is not None
        try:
            while True:
                while self._ready:
                    record = self._ready.popleft()
                    if isinstance(record, Oversized) or record.strip():
                        self.on_line(self, record)
                if not await self._read_more() and not self._ready:
                    break
        finally:
            code = await self.proc.wait()
            self.on_exit(self, code, "; ".join(self._stderr))

    async def _drain_stderr(self) -> None:
        assert self.proc is not None
        assert self.proc.stderr is not None
        lines = LineBuffer(_STDERR_LINE)
        while True:
            try:
                chunk = await self.proc.stderr.read(_READ)
            except ConnectionError:
                return
            for record in lines.feed(chunk) if chunk else lines.close():
                if isinstance(record, Oversized):
                    text = record.prefix[:200].decode("utf-8", errors="replace") + f"… ({record.size} bytes)"
                else:
                    text = record.decode("utf-8", errors="replace").rstrip()
                self._stderr.append(text)
                sys.stderr.write(f"[runtime {self.pid}] {text}\n")
            if not chunk:
                return

    def send(self, data: bytes) -> bool:
        """One JSONL line to the child; False when it is gone."""
        if self.proc is None or self.proc.stdin is None or self.proc.stdin.is_closing():
            return False
        try:
            self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        except (ConnectionError, RuntimeError):
            return False
        return True

    def close_input(self) -> None:
        """Begin a graceful stop now: close stdin; the runtime finishes its work, then exits."""
        self.stopping = True
        if self.proc is not None and self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    def interrupt(self) -> None:
        """Tell the runtime to stop its work now: close stdin and SIGTERM the runtime process alone
        (it aborts its turn, saves its session and exits; its tools' processes are its to end).
        Whoever asked kills it if it has not exited after a grace."""
        self.close_input()
        if self.proc is not None and not self.proc.finished:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)

    async def stop(self) -> None:
        """Graceful: close stdin (the runtime finishes its work, then exits), then escalate."""
        self.close_input()
        if self.proc is None or self.proc.finished:
            return
        try:
            await asyncio.wait_for(self.proc.wait(), STOP_GRACE)
        except TimeoutError:
            await self.kill(signal.SIGTERM)

    async def kill(self, sig: int = signal.SIGKILL) -> None:
        self.stopping = True
        if self.proc is None or self.proc.finished:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), STOP_GRACE)
        if not self.proc.finished:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()

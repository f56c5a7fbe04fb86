"""``shard agent --stdio``: the direct-connection transport — JSONL commands on stdin, events on stdout.

A thin adapter: bytes in through :class:`~shard.protocol.framing.LineBuffer` into
:meth:`Runtime.handle`, events out as one line each. Pipes and sockets are driven by asyncio; a
regular file or a terminal (``shard agent --stdio < commands.jsonl``) is read on a thread and written
with blocking writes, so any stdin works.

End of input does not cut a turn short: the runtime finishes what it was given, then the process
exits. A closed stdout (the client is gone) or SIGTERM/SIGINT aborts the turn and exits.

Backpressure: while more than the outbound cap (16 MiB, the daemon's per-client cap) waits to be
written to stdout, no command is taken from stdin — the pipe transport pauses us, the bounded stdin
queue fills, and the client's writes block. A client that never reads therefore cannot make the agent
buffer without limit, and nothing is dropped: reading lets everything continue.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import stat
import sys
import threading

from shard._trace import mark
from shard.agent.boot import Prepared
from shard.agent.mcp.host import McpHost
from shard.agent.runtime import Runtime
from shard.protocol.agent_events import ErrorEvent
from shard.protocol.errors import ShardError
from shard.protocol.event_base import EventBase
from shard.protocol.framing import DEFAULT_OUTBOUND_CAP, LineBuffer, encode_line

_READ_SIZE = 64 * 1024
_QUEUED_CHUNKS = 1  # read ahead of the command being handled: with the reader's own buffer, ~200 KB


class _Output:
    """Writes event lines to fd 1; reports a vanished reader through ``closed`` and output backed up
    past the cap by clearing ``writable`` (a blocking stdout never backs up: writes wait instead)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cap: int = DEFAULT_OUTBOUND_CAP) -> None:
        self.closed = asyncio.Event()
        self.writable = asyncio.Event()
        self.writable.set()
        self._transport: asyncio.WriteTransport | None = None
        self._loop = loop
        self._cap = cap

    async def open(self) -> None:
        mode = os.fstat(1).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            pipe = os.fdopen(os.dup(1), "wb", buffering=0)
            self._transport, _ = await self._loop.connect_write_pipe(
                lambda: _PipeWatcher(self.closed, self.writable), pipe
            )
            self._transport.set_write_buffer_limits(high=self._cap)

    def send(self, event: EventBase) -> None:
        if self.closed.is_set():
            return
        data = encode_line(event.to_json())
        try:
            if self._transport is not None:
                self._transport.write(data)
            else:
                view = memoryview(data)
                while view:
                    view = view[os.write(1, view) :]
        except (BrokenPipeError, ConnectionResetError):
            self.closed.set()

    async def finish(self) -> None:
        """Flush what is buffered and close; returns once the pipe took it (or the reader left)."""
        if self._transport is None:
            return
        self._transport.close()  # a pipe transport flushes its buffer before it reports the close
        await self.closed.wait()


class _PipeWatcher(asyncio.Protocol):
    def __init__(self, closed: asyncio.Event, writable: asyncio.Event) -> None:
        self._closed = closed
        self._writable = writable

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed.set()
        self._writable.set()  # nobody waits on a reader that is gone


async def _pump_stdin(queue: asyncio.Queue[bytes | None]) -> None:
    loop = asyncio.get_running_loop()
    mode = os.fstat(0).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        reader = asyncio.StreamReader(limit=_READ_SIZE)
        pipe = os.fdopen(os.dup(0), "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        while chunk := await reader.read(_READ_SIZE):
            await queue.put(chunk)
        await queue.put(None)
        return

    def blocking_reader() -> None:
        while True:
            try:
                chunk = os.read(0, _READ_SIZE)
            except OSError:
                chunk = b""
            try:  # waits while the queue is full: the bound holds for files and terminals too
                asyncio.run_coroutine_threadsafe(queue.put(chunk or None), loop).result()
            except (RuntimeError, concurrent.futures.CancelledError):
                return  # the loop is gone: the process is ending
            if not chunk:
                return

    threading.Thread(target=blocking_reader, name="shard-stdin", daemon=True).start()


async def serve(prepared: Prepared) -> int:
    """Phase B: run the runtime on stdio until input ends or the client goes away."""
    loop = asyncio.get_running_loop()
    out = _Output(loop)
    await out.open()
    mcp = McpHost.for_config(prepared.config, prepared.cwd, prepared.options.tools)
    try:
        runtime = Runtime.from_prepared(prepared, sink=out.send, mcp=mcp)
        _record_startup_choices(runtime, prepared)
    except ShardError as exc:
        out.send(ErrorEvent(code=exc.code.value, message=exc.message, fatal=True))
        await out.finish()
        return 3
    runtime.start_background_work()  # sync already went out in phase A
    mark("agent: serving")

    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    queue: asyncio.Queue[bytes | None] = asyncio.Queue(_QUEUED_CHUNKS)
    pump = loop.create_task(_pump_stdin(queue))
    framer = LineBuffer(prepared.config.max_input_bytes)

    async def consume() -> None:
        while True:
            chunk = await queue.get()
            records = framer.close() if chunk is None else framer.feed(chunk)
            for record in records:
                if isinstance(record, bytes) and not record.strip():
                    continue  # a blank line carries no message; it is not an error
                await out.writable.wait()  # output backed up: take no more input until it drains
                await runtime.handle(record)
            if chunk is None:
                runtime.lose_responder()  # nobody is left to answer permission or UI requests
                await runtime.wait_idle()
                return

    consumer = loop.create_task(consume())
    closed = loop.create_task(out.closed.wait())
    stopped = loop.create_task(stop.wait())
    await asyncio.wait({consumer, closed, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not consumer.done():
        consumer.cancel()
        await runtime.abort("interrupted")  # not the user's abort: the reply shows as interrupted
    for task in (closed, stopped, pump, consumer):
        task.cancel()
    await asyncio.gather(pump, consumer, closed, stopped, return_exceptions=True)
    if mcp is not None:
        await mcp.close()  # no MCP server outlives its runtime
    await out.finish()
    prepared.store.close()
    return 3 if runtime.fatal is not None else 0


def _record_startup_choices(runtime: Runtime, prepared: Prepared) -> None:
    """Write what the command line changed in a restored session, so the next restore sees it."""
    if prepared.model_changed and prepared.model is not None:
        runtime.transcript.record("model_change", model=prepared.model.id, reasoning=prepared.reasoning)
    if prepared.mode_changed:
        runtime.transcript.record("mode_change", mode=prepared.mode)


def run(prepared: Prepared) -> int:
    try:
        return asyncio.run(serve(prepared))
    except KeyboardInterrupt:
        return 130
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()

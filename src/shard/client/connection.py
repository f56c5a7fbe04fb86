"""One logical connection to a server, kept alive across drops.

:class:`Connection` opens a transport with its connector, checks ``hello`` (a different major
protocol version is :class:`ProtocolVersionError`, R7.11, R6.4.17), correlates each command's
``response`` by ``id`` with a timeout (R5.1.2), and hands every other message, in order, to
``on_event``. When the transport drops it fails the waiting requests with :class:`ConnectionLost`
(commands are never replayed), waits 1, 2, 4 … 30 s between attempts (R2.2.6, R2.2.7; clock and
sleep injectable), and after each new ``hello`` calls ``on_reconnect`` — the client re-attaches
there (R2.2.8). ``generation`` counts hellos: an answer belongs to the generation that sent it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from enum import Enum
from typing import Any

from shard.client.backoff import Backoff
from shard.client.connectors import Connector
from shard.client.decode import decode_event
from shard.client.errors import (
    AuthError,
    ClientClosed,
    CommandError,
    ConnectError,
    ConnectionLost,
    ProtocolVersionError,
    RequestTimeout,
    ShardClientError,
)
from shard.client.transports import NotSent, Transport
from shard.protocol.commands import CommandBase
from shard.protocol.events import EventBase, Hello, Response

log = logging.getLogger("shard.client")

CLIENT_PROTOCOL_MAJOR = 0
HELLO_TIMEOUT = 10.0
DEFAULT_REQUEST_TIMEOUT = 30.0

Sleep = Callable[[float], Awaitable[None]]


class State(Enum):
    CONNECTING = "connecting"
    OPEN = "open"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


@dataclass
class _Pending:
    future: asyncio.Future[Response]
    agent_id: str | None
    generation: int


def check_hello(hello: Hello, major: int = CLIENT_PROTOCOL_MAJOR) -> None:
    """Raise ProtocolVersionError unless ``hello.protocol_version``'s major is ``major``."""
    head = hello.protocol_version.split(".", 1)[0]
    if not head.isdigit() or int(head) != major:
        raise ProtocolVersionError(hello.protocol_version, major)


class Connection:
    def __init__(
        self,
        connector: Connector,
        *,
        on_event: Callable[[EventBase], None],
        on_reconnect: Callable[[], Coroutine[Any, Any, None]] | None = None,
        on_closed: Callable[[BaseException | None], None] | None = None,
        reconnect: bool = True,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self.connector = connector
        self.on_event = on_event
        self.on_reconnect = on_reconnect
        self.on_closed = on_closed
        self.reconnect = reconnect
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.request_timeout = request_timeout
        self.state = State.CONNECTING
        self.generation = 0
        self.hello: Hello | None = None
        self.transport: Transport | None = None
        self.error: BaseException | None = None  # why the connection ended for good
        self._ids = itertools.count(1)
        self._pending: dict[str, _Pending] = {}
        self._abandoned: set[str] = set()  # ids whose answer no one waits for any more
        self._open = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._reattach: asyncio.Task[None] | None = None

    # --- opening ------------------------------------------------------------------------------

    async def open(self) -> Hello:
        """Connect once (no retry: a first failure is the caller's to see) and start reading."""
        transport = await self.connector()
        hello = await self._greet(transport)
        self._install(transport, hello)
        self._task = asyncio.create_task(self._run(), name="shard-client-reader")
        return hello

    async def _greet(self, transport: Transport) -> Hello:
        try:
            raw = await asyncio.wait_for(transport.recv(), HELLO_TIMEOUT)
        except TimeoutError:
            raw = None
        event = decode_event(raw) if raw is not None else None
        try:
            if not isinstance(event, Hello):
                raise ConnectError("the server did not open with hello")
            check_hello(event)
        except ShardClientError:
            await transport.close()
            raise
        return event

    def _install(self, transport: Transport, hello: Hello) -> None:
        self._abandoned.clear()  # a new connection: nothing of the old one will answer on it
        self.transport = transport
        self.hello = hello
        self.generation += 1
        self.state = State.OPEN
        self._open.set()

    # --- reading and reconnecting ---------------------------------------------------------------

    async def _run(self) -> None:
        error: BaseException | None = None
        try:
            while True:
                transport = self.transport
                assert transport is not None
                while (raw := await transport.recv()) is not None:
                    self._dispatch(raw)
                if self.state is State.CLOSED:
                    return
                self._open.clear()
                self._fail_pending(ConnectionLost("the connection dropped"))
                await transport.close()
                if not self.reconnect:
                    error = ConnectionLost("the connection closed")
                    return
                self.state = State.RECONNECTING
                await self._reconnect()
                if self.on_reconnect is not None:
                    self._reattach = asyncio.create_task(self.on_reconnect(), name="shard-client-reattach")
        except ShardClientError as exc:
            error = exc
        finally:
            if self.state is not State.CLOSED:
                self._finish(error)

    async def _reconnect(self) -> None:
        for attempt in itertools.count():
            delay = self.backoff.delay(attempt)
            log.info("shard client: reconnecting in %.1f s (attempt %d)", delay, attempt + 1)
            await self.sleep(delay)
            if self.state is State.CLOSED:
                raise ClientClosed("closed while reconnecting")
            try:
                transport = await self.connector()
            except AuthError:
                raise
            except ConnectError as exc:
                log.info("shard client: %s", exc)
                continue
            try:
                hello = await self._greet(transport)
            except ProtocolVersionError:
                raise
            except ConnectError:
                continue
            self._install(transport, hello)
            return

    def _dispatch(self, raw: bytes) -> None:
        event = decode_event(raw)
        if event is None:
            log.warning("shard client: dropped an unreadable message")
            return
        if isinstance(event, Response):
            pending = self._pending.pop(event.id, None) if event.id is not None else None
            if pending is not None:
                if not pending.future.done():
                    pending.future.set_result(event)
                return
            if event.id in self._abandoned:
                self._abandoned.discard(event.id)
                return  # the late answer to a request that timed out or went stale: dropped
        self.on_event(event)

    # --- requests -------------------------------------------------------------------------------

    async def request(
        self, command: CommandBase, *, timeout: float | None = None, agent_id: str | None = None
    ) -> Response:
        """Send ``command`` with a fresh ``id``; its response, or CommandError when it failed.
        While reconnecting, waits (within the timeout) for the connection to come back."""
        limit = self.request_timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        msg_id = f"c{next(self._ids)}"
        command.id = msg_id
        future: asyncio.Future[Response] = loop.create_future()
        while True:
            try:
                await asyncio.wait_for(self._wait_open(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise RequestTimeout(f"{command.type}: not connected within {limit} s") from None
            transport = self.transport
            assert transport is not None
            self._pending[msg_id] = _Pending(future, agent_id, self.generation)
            try:
                await transport.send(command.to_json())
                break
            except NotSent:  # dropped before a byte went out: wait for the reconnect, send then
                self._pending.pop(msg_id, None)
                if self.transport is transport:
                    self._open.clear()
            except (ConnectionError, OSError) as exc:
                self._pending.pop(msg_id, None)
                raise ConnectionLost(f"{command.type}: the connection dropped while sending") from exc
        try:
            response = await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - loop.time()))
        except TimeoutError:
            self._pending.pop(msg_id, None)
            self._abandoned.add(msg_id)
            raise RequestTimeout(f"{command.type}: no response within {limit} s") from None
        if not response.success:
            err = response.error
            raise CommandError(
                response.command or command.type,
                err.code if err else "UNKNOWN",
                err.message if err else "the command failed",
                err.data if err else None,
            )
        return response

    async def _wait_open(self) -> None:
        while True:
            if self.state is State.CLOSED:
                raise self.error if isinstance(self.error, ShardClientError) else ClientClosed("closed")
            if self._open.is_set():
                return
            await self._open.wait()

    def fail_agent_requests(self, agent_id: str | None, error: ShardClientError) -> None:
        """Fail every request still waiting for ``agent_id`` (a superseded runtime, R9.1.17); their
        late answers are then dropped."""
        for msg_id, pending in list(self._pending.items()):
            if pending.agent_id == agent_id:
                del self._pending[msg_id]
                self._abandoned.add(msg_id)
                if not pending.future.done():
                    pending.future.set_exception(error)

    def _fail_pending(self, error: ShardClientError) -> None:
        pending, self._pending = self._pending, {}
        for p in pending.values():
            if not p.future.done():
                p.future.set_exception(error)

    # --- closing ----------------------------------------------------------------------------------

    def drop(self) -> None:
        """Cut the live transport as a network failure would; a reconnecting client reconnects."""
        if self.transport is not None:
            self.transport.abort()

    async def close(self) -> None:
        if self.state is State.CLOSED:
            return
        self.state = State.CLOSED
        self._open.set()  # wake waiters: they see CLOSED
        for task in (self._reattach, self._task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        if self.transport is not None:
            await self.transport.close()
        for task in (self._reattach, self._task):
            if task is not None and task is not asyncio.current_task():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._finish(None)

    def _finish(self, error: BaseException | None) -> None:
        self.state = State.CLOSED
        self.error = error
        self._open.set()
        self._fail_pending(error if isinstance(error, ShardClientError) else ClientClosed("closed"))
        if self.on_closed is not None:
            self.on_closed(error)

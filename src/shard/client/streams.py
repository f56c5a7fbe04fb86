"""Event streams: async iterators fed by the connection's reader, one queue per subscriber.

A stream yields events in arrival order. It ends (``StopAsyncIteration``) when its subscription is
closed, detached or the client closes cleanly, and raises the error that ended the connection for
good (e.g. :class:`~shard.client.errors.ProtocolVersionError` on a reconnect) otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

from shard.protocol.events import EventBase

E = TypeVar("E", bound=EventBase)


class _End:
    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class EventStream(Generic[E]):
    def __init__(self, owner: list[EventStream[E]]) -> None:
        self._queue: asyncio.Queue[E | _End] = asyncio.Queue()
        self._owner = owner
        self._ended: _End | None = None
        owner.append(self)

    def put(self, event: E) -> None:
        if self._ended is None:
            self._queue.put_nowait(event)

    def end(self, error: BaseException | None = None) -> None:
        if self._ended is None:
            self._ended = _End(error)
            self._queue.put_nowait(self._ended)
            if self in self._owner:
                self._owner.remove(self)

    def take_ready(self) -> list[E]:
        """The events queued now, without waiting (the stream stays open)."""
        out: list[E] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, _End):
                self._queue.put_nowait(item)
                break
            out.append(item)
        return out

    def close(self) -> None:
        """Stop receiving; what was queued is still yielded, then the stream ends."""
        self.end(None)

    def __aiter__(self) -> AsyncIterator[E]:
        return self

    async def __anext__(self) -> E:
        item = await self._queue.get()
        if isinstance(item, _End):
            self._queue.put_nowait(item)  # stays ended
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return item

    async def next(self, timeout: float | None = None) -> E:
        """The next event (``TimeoutError`` after ``timeout`` seconds)."""
        return await asyncio.wait_for(self.__anext__(), timeout)


def broadcast(streams: list[EventStream[E]], event: E) -> None:
    for stream in list(streams):
        stream.put(event)


def end_all(streams: list[EventStream[E]], error: BaseException | None) -> None:
    for stream in list(streams):
        stream.end(error)

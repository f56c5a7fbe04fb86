"""A clock that moves only when a test moves it: timeouts are tested by advancing it, never by
sleeping. It serves both kinds of code that take a clock: a ``Clock`` (``time()`` and
``sleep_until(deadline)``, as :class:`shard.agent.permissions.board.RequestBoard` takes) and a plain
``() -> float`` (as the daemon's broker takes, whose timers :class:`shard.testing.broker.BrokerHarness`
fires when it advances ``now``)."""

from __future__ import annotations

import asyncio


class FakeClock:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._changed = asyncio.Event()

    def time(self) -> float:
        return self.now

    def __call__(self) -> float:
        return self.now

    async def sleep_until(self, deadline: float) -> None:
        if deadline <= self.now:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (deadline, future)
        self._sleepers.append(entry)
        self._changed.set()
        try:
            await future
        finally:
            self._sleepers.remove(entry)
            self._changed.set()

    def advance(self, seconds: float) -> None:
        """Move time on; every sleeper whose deadline has come wakes."""
        self.now += seconds
        for deadline, future in self._sleepers:
            if deadline <= self.now and not future.done():
                future.set_result(None)

    @property
    def sleepers(self) -> int:
        return len(self._sleepers)

    @property
    def deadlines(self) -> list[float]:
        """When the current sleepers wake, earliest first."""
        return sorted(deadline for deadline, _ in self._sleepers)

    async def until_sleeping(self, count: int = 1) -> None:
        """Wait until ``count`` sleepers wait on this clock (the code under test reached its timeout)."""
        while len(self._sleepers) < count:
            self._changed.clear()
            await self._changed.wait()

"""``subagent.wait`` (PROTOCOL §10.3), sans-I/O: waiters over runs fixed at acceptance.

A wait that is not complete at once holds its connection only (R10.3.31) until its runs settle, its
timeout fires — which ends the waiting, never the work (R10.3.26) — or the connection closes, which
cancels the waiter alone (R10.3.29).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

from shard.daemon import wire
from shard.daemon.desk import Desk
from shard.daemon.effects import CancelTimer, Client, StartTimer
from shard.daemon.jobs import views
from shard.daemon.jobs.model import Run
from shard.daemon.jobs.timers import WaitEnd
from shard.protocol import commands as cmd


@dataclass(slots=True)
class Waiter:
    client: Client
    command: cmd.SubagentWait
    runs: list[Run]
    key: WaitEnd

    @property
    def done(self) -> bool:
        ends = [r.terminal for r in self.runs]
        return any(ends) if self.command.mode == "any" else all(ends)


class Waits:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.waiters: dict[WaitEnd, Waiter] = {}
        self._keys = count(1)

    def start(self, client: Client, c: cmd.SubagentWait, runs: list[Run]) -> None:
        waiter = Waiter(client, c, runs, WaitEnd(next(self._keys)))
        if waiter.done or c.timeout == 0:
            self._answer(waiter, timed_out=not waiter.done)
            return
        client.waiting = True  # blocks this connection only (R10.3.31)
        self.waiters[waiter.key] = waiter
        if c.timeout is not None:
            self.desk.emit(StartTimer(waiter.key, c.timeout))

    def settled(self) -> None:
        """Runs ended: answer the waits now complete."""
        for key, waiter in list(self.waiters.items()):
            if waiter.done:
                del self.waiters[key]
                self.desk.emit(CancelTimer(key))
                self._answer(waiter, timed_out=False)
                self.desk.resume(waiter.client)

    def timer(self, key: WaitEnd) -> None:
        waiter = self.waiters.pop(key, None)
        if waiter is not None:  # stops the waiting only, never the work (R10.3.26)
            self._answer(waiter, timed_out=True)
            self.desk.resume(waiter.client)

    def disconnected(self, client: Client) -> None:
        for key, waiter in list(self.waiters.items()):
            if waiter.client is client:
                del self.waiters[key]
                self.desk.emit(CancelTimer(key))

    def _answer(self, waiter: Waiter, *, timed_out: bool) -> None:
        result = views.wait_result(waiter.runs, timed_out=timed_out)
        self.desk.send(waiter.client, wire.reply(waiter.command, result))

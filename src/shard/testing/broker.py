"""The daemon's broker in memory: no sockets, no processes, no sleeps.

:class:`BrokerHarness` holds a real :class:`shard.daemon.broker.Broker` and performs its effects the
way the asyncio shell does, in memory: :class:`MemoryClient` connections (a client's commands wait
while its previous one does, as on a socket), :class:`FakeRuntime` runtime generations the test
drives line by line, a :class:`FakeClock` whose timers fire when the test advances it, and
``MemoryManifests`` (``shard.testing.manifests``) for the registry. Whatever would happen "later" in
the shell (a runtime becoming ready, answering ``runtime.sync``, exiting after its stdin closed) is
queued and runs once the current input's effects are performed; each can be switched off to hold
that moment open.

    harness = BrokerHarness()
    client = harness.connect()
    agent = client.create("/project")
    client.attach(agent)
    harness.runtime(agent).emit({"type": "status", "status": "streaming"})
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, assert_never

import orjson

from shard.daemon.broker import Broker
from shard.daemon.effects import (
    Broadcast,
    CancelTimer,
    Client,
    Effect,
    Generation,
    KillRuntime,
    Log,
    Offload,
    Remember,
    Resume,
    Send,
    SpawnRuntime,
    StartTimer,
    Stopped,
    StopRuntime,
    Subscriber,
    TimerKey,
    ToRuntime,
)
from shard.daemon.record import AgentRecord
from shard.protocol.errors import ErrorCode, ShardError
from shard.testing.clock import FakeClock
from shard.testing.manifests import MemoryManifests as MemoryManifests
from shard.testing.wire import problem_with

CAPABILITIES = ["streaming-deltas", "mode-catalog", "mode-switch"]


class MemoryClient:
    """A connection whose received messages are kept, decoded, in ``received``."""

    def __init__(self, harness: BrokerHarness, client: Client) -> None:
        self.harness = harness
        self.client = client
        self.received: list[dict[str, Any]] = []
        self._unread: deque[bytes] = deque()  # lines sent while a command of ours waits
        self._ids = 0

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(orjson.dumps(message))

    def send_raw(self, line: bytes) -> None:
        self._unread.append(line)
        self.harness._read(self)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a command with a fresh id; its response (which must have arrived: a command that
        waits for a runtime needs the runtime to move first)."""
        self._ids += 1
        message = {"id": f"{message['type']}-{self._ids}", **message}
        self.send(message)
        return self.response(message["id"])

    def response(self, msg_id: str) -> dict[str, Any]:
        found = [m for m in self.received if m["type"] == "response" and m.get("id") == msg_id]
        assert found, f"no response {msg_id!r} yet; received {self.types()}"
        assert len(found) == 1, f"{len(found)} responses {msg_id!r}"
        return found[0]

    def create(self, cwd: str = "/project", **fields: Any) -> str:
        response = self.request({"type": "agent.create", "cwd": cwd, **fields})
        assert response["success"], response
        agent_id: str = response["data"]["agent_id"]
        return agent_id

    def attach(self, agent_id: str, role: str | None = None) -> dict[str, Any]:
        """Attach; the sync it gets."""
        message = {"type": "agent.attach", "agent_id": agent_id, **({"role": role} if role else {})}
        response = self.request(message)
        assert response["success"], response
        return [m for m in self.received if m["type"] == "sync" and m["agent_id"] == agent_id][-1]

    def types(self, agent_id: str | None = None) -> list[str]:
        return [m["type"] for m in self.received if agent_id is None or m.get("agent_id") == agent_id]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == kind]

    def close(self) -> None:
        self.harness.perform(self.harness.broker.disconnect(self.client))


class FakeRuntime:
    """One runtime generation: what the daemon sent it (``commands``) and what the test makes it write."""

    def __init__(self, harness: BrokerHarness, gen: Generation, record: AgentRecord) -> None:
        self.harness = harness
        self.gen = gen
        self.record = record
        self.commands: list[dict[str, Any]] = []
        self.status = "idle"
        self.auto_sync = True  # answer runtime.sync with snapshot() at once
        self.auto_accept = True  # accept prompt, steer and abort at once, as a runtime does
        self.exited = False
        self._requests: dict[str, dict[str, Any]] = {}  # open, as this runtime sees them

    def snapshot(self) -> dict[str, Any]:
        return {
            "type": "sync",
            "status": self.status,
            "mode": "build",
            "session_id": self.record.session_id,
            "capabilities": CAPABILITIES,
            "live_window": {"messages": []},
            "pending_requests": list(self._requests.values()),
        }

    def ready(self) -> None:
        hello = {
            "type": "hello",
            "protocol_version": "0.1.0",
            "server_version": "t",
            "capabilities": CAPABILITIES,
        }
        self.harness.perform(self.harness.broker.runtime_ready(self.gen, hello, self.snapshot()))

    def fail(self, message: str = "the runtime did not become ready") -> None:
        self.exited = True
        error = ShardError(ErrorCode.RUNTIME_START_FAILED, message)
        self.harness.perform(self.harness.broker.runtime_failed(self.gen, error))

    def emit(self, event: dict[str, Any]) -> None:
        """Write one event (``type`` first, as the runtime writes it)."""
        kind = event["type"]
        if kind == "status":
            self.status = event["status"]
        elif kind in ("permission_request", "ui_request"):
            self._requests[event["request_id"]] = event
        elif kind in ("permission_resolved", "ui_resolved"):
            self._requests.pop(event["request_id"], None)
        self.write(orjson.dumps({"type": kind, **event}))

    def write(self, line: bytes) -> None:
        self.harness.perform(self.harness.broker.runtime_line(self.gen, line))

    def delta(self, text: str, message_id: str = "msg-1") -> None:
        self.emit(
            {
                "type": "message_delta",
                "message_id": message_id,
                "block_index": 0,
                "kind": "text",
                "text_delta": text,
            }
        )

    def ask(self, request_id: str = "req-1") -> dict[str, Any]:
        event = {
            "type": "permission_request",
            "request_id": request_id,
            "tool_name": "touch",
            "input": {"path": "x"},
            "prompt": "touch x?",
            "options": ["allow", "deny"],
        }
        self.emit(event)
        return event

    def respond(self, command: dict[str, Any], data: Any = None, *, success: bool = True) -> None:
        response: dict[str, Any] = {
            "type": "response",
            "id": command["id"],
            "command": command["type"],
            "success": success,
        }
        if data is not None:
            response["data"] = data
        self.write(orjson.dumps(response))

    def got(self, kind: str) -> list[dict[str, Any]]:
        """Commands of ``kind`` it received (oldest first)."""
        return [c for c in self.commands if c["type"] == kind]

    @property
    def responders_present(self) -> bool | None:
        told = self.got("runtime.responders")
        return told[-1]["present"] if told else None

    def exit(self, code: int | None = 0, stderr: str = "") -> None:
        self.exited = True
        self.harness.perform(self.harness.broker.runtime_exited(self.gen, code, stderr))

    def _received(self, command: dict[str, Any]) -> None:
        self.commands.append(command)
        if command["type"] == "runtime.responders":
            self.harness.soon(lambda: self.respond(command))
        elif command["type"] == "runtime.sync" and self.auto_sync:
            self.harness.soon(lambda: self.respond(command, self.snapshot()))
        elif command["type"] in ("prompt", "steer", "abort") and self.auto_accept:
            self.harness.soon(lambda: self.respond(command))


class BrokerHarness:
    def __init__(
        self,
        *,
        max_runtimes: int = 16,
        idle_timeout: float = 600.0,
        records: Iterable[AgentRecord] = (),
        subscribers: Iterable[Subscriber] | None = None,
        auto_ready: bool = True,
        auto_exit: bool = True,
        manifests: MemoryManifests | None = None,
    ) -> None:
        from shard.daemon.activity import ActivityTracker

        self.clock = FakeClock(1000.0)
        self.wall = FakeClock(1.7e9)
        self.manifests = manifests or MemoryManifests()
        records = list(records) or [dataclasses.replace(r) for r in self.manifests.rows.values()]
        for record in records:
            self.manifests.rows[record.agent_id] = dataclasses.replace(record)
        self.broker = Broker(
            records,
            self.manifests,
            clock=self.clock,
            wall=self.wall,
            idle_timeout=idle_timeout,
            max_runtimes=max_runtimes,
            subscribers=[ActivityTracker(self.wall)] if subscribers is None else subscribers,
        )
        self.auto_ready = auto_ready  # a spawned runtime becomes ready at once
        self.auto_exit = auto_exit  # a runtime whose stdin closed or that was signalled exits at once
        self.clients: list[MemoryClient] = []
        self.runtimes: list[FakeRuntime] = []  # every generation spawned, in order
        self.timers: dict[TimerKey, float] = {}  # key -> deadline on ``clock``
        self.stops: list[Generation] = []
        self.kills: list[tuple[Generation, bool]] = []
        self.signals: list[StopRuntime | KillRuntime] = []  # every stop and kill, in order
        self.logs: list[str] = []
        self.stopped = False
        self._by_client: dict[Client, MemoryClient] = {}
        self._by_gen: dict[Generation, FakeRuntime] = {}
        self._soon: deque[Callable[[], None]] = deque()
        self._performing = False

    def connect(self, transport: str = "unix", label: str = "") -> MemoryClient:
        client, effects = self.broker.connect(len(self.clients) + 1, transport, label)
        memory = MemoryClient(self, client)
        self.clients.append(memory)
        self._by_client[client] = memory
        self.perform(effects)
        return memory

    def runtime(self, agent_id: str) -> FakeRuntime:
        """The agent's latest runtime generation."""
        return [r for r in self.runtimes if r.gen.agent_id == agent_id][-1]

    def advance(self, seconds: float) -> None:
        """Move the clock; every timer due meanwhile fires, in order."""
        target = self.clock.now + seconds
        while True:
            due = sorted(  # by deadline, then in the order they were armed
                ((deadline, key) for key, deadline in self.timers.items() if deadline <= target),
                key=lambda pair: pair[0],
            )
            if not due:
                break
            deadline, key = due[0]
            self.clock.now = max(self.clock.now, deadline)
            del self.timers[key]
            self.perform(self.broker.timer(key))
        self.clock.now = target

    def shutdown(self, *, force: bool = False) -> None:
        self.perform(self.broker.shutdown(force=force))

    def soon(self, action: Callable[[], None]) -> None:
        """Run ``action`` after the effects being performed, as the event loop would."""
        self._soon.append(action)

    def wire_problems(self) -> list[str]:
        """Every message a client received that is not a valid event of ``shard schema``."""
        out = []
        for memory in self.clients:
            for message in memory.received:
                why = problem_with(message)
                if why is not None:
                    out.append(f"{why}: {str(message)[:300]}")
        return out

    def perform(self, effects: list[Effect]) -> None:
        for effect in effects:
            self._perform(effect)
        if self._performing:
            return
        self._performing = True
        try:
            while self._soon:
                self._soon.popleft()()
        finally:
            self._performing = False

    def _perform(self, effect: Effect) -> None:
        if isinstance(effect, Send):
            for client in effect.to:
                self._deliver(client, effect.data)
        elif isinstance(effect, Broadcast):
            for memory in self.clients:
                self._deliver(memory.client, effect.data)
        elif isinstance(effect, ToRuntime):
            self._by_gen[effect.gen]._received(orjson.loads(effect.data))
        elif isinstance(effect, SpawnRuntime):
            runtime = FakeRuntime(self, effect.gen, effect.record)
            self.runtimes.append(runtime)
            self._by_gen[effect.gen] = runtime
            if self.auto_ready:
                self.soon(runtime.ready)
        elif isinstance(effect, StopRuntime | KillRuntime):
            self.signals.append(effect)
            if isinstance(effect, StopRuntime):
                self.stops.append(effect.gen)
            else:
                self.kills.append((effect.gen, effect.force))
            runtime = self._by_gen[effect.gen]
            code = 0 if isinstance(effect, StopRuntime) else -9 if effect.force else -15
            if self.auto_exit:
                self.soon(lambda: None if runtime.exited else runtime.exit(code))
        elif isinstance(effect, StartTimer):
            self.timers[effect.key] = self.clock.now + effect.delay
        elif isinstance(effect, CancelTimer):
            self.timers.pop(effect.key, None)
        elif isinstance(effect, Remember):
            row = self.manifests.rows.get(effect.agent_id)
            if row is not None:
                for name, value in effect.fields.items():
                    setattr(row, name, value)
        elif isinstance(effect, Resume):
            memory = self._by_client[effect.client]
            self.soon(lambda: self._read(memory))
        elif isinstance(effect, Log):
            self.logs.append(effect.text)
        elif isinstance(effect, Offload):  # the worker thread, inline: git and files are real in tests
            self.soon(lambda: self.perform(self.broker.offloaded(effect.then, _outcome(effect.call))))
        elif isinstance(effect, Stopped):
            self.stopped = True
            for memory in self.clients:
                self.perform(self.broker.disconnect(memory.client))
        else:
            assert_never(effect)

    def _deliver(self, client: Client, data: bytes) -> None:
        if not client.closed:
            self._by_client[client].received.append(orjson.loads(data))

    def _read(self, memory: MemoryClient) -> None:
        """Feed the client's unread lines to the broker, one command at a time, as the shell does."""
        while memory._unread and not memory.client.waiting and not memory.client.closed:
            self.perform(self.broker.receive(memory.client, memory._unread.popleft()))


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:
        return exc

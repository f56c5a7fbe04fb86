"""The daemon's broker and supervisor (PROTOCOL §5, §6, §10; DESIGN §2).

* **Routing.** A per-agent command needs an ``agent_id`` this connection is attached to
  (NOT_ATTACHED), naming an agent that exists (NOT_FOUND). It goes to the runtime under a daemon id
  (client ids may collide) with ``agent_id`` stripped; the response comes back to the sender alone,
  with its own id restored.
* **Fan-out.** Every event a runtime writes is tagged with its ``agent_id`` once — a byte splice, no
  re-encoding — and the same bytes go to every attachment.
* **Attach** (§6.4): the runtime is started (coalesced), asked for a ``runtime.sync`` snapshot, and
  the connection is promoted in the runtime's own output order: the attach response, then ``sync``,
  then every later event exactly once. Open requests are re-shown to an interactive attacher.
* **Broadcast requests** (§6.3): the first valid answer is forwarded, later ones are acknowledged and
  dropped; observers cannot answer. A child with no interactive client of its own has its requests
  shown to its nearest interactive ancestor's clients. Whether anyone can answer is told to the
  runtime (``runtime.responders``), whose headless policy then decides.
* **Supervision**: runtimes start on demand, are reaped after the idle timeout (only when idle or in
  terminal error), report a crash as ``agent_exited``, and a replacement generation gets a new
  ``runtime_epoch`` and a fresh ``sync`` to every attachment. At most ``max_runtimes`` runtime
  processes live at once (``limits.py`` decides who makes room).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

import orjson

from shard._version import PROTOCOL_VERSION, __version__
from shard.daemon import sessions
from shard.daemon.activity import phase_of
from shard.daemon.connection import Connection
from shard.daemon.limits import DEFAULT_MAX_RUNTIMES, Occupant, admit
from shard.daemon.registry import AgentRecord, Registry
from shard.daemon.runtime_proc import RuntimeProcess
from shard.daemon.slot import ACTIVE_STATUSES, INTERACTIVE, AgentSlot, Forwarded, OpenRequest
from shard.protocol import commands as cmd
from shard.protocol.answers import permission_answer_error, ui_answer
from shard.protocol.codec import error_response, parse_command
from shard.protocol.errors import ErrorCode, FrameError, ShardError, shown
from shard.protocol.framing import Oversized, peek_envelope
from shard.protocol.ids import new_id
from shard.protocol.results import AgentTerminateResult

DEFAULT_IDLE_TIMEOUT = 600.0
_NEVER_WAKE = ("list_modes", "list_reasoning_levels")
_DAEMON_SET_FIELDS = (
    "system_prompt",
    "depth",
    "launch_policy",
    "alias",
    "definition_name",
    "display_name",
    "names",
)


class Daemon:
    def __init__(
        self,
        home: Path,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        socket_path: Path,
        max_runtimes: int = DEFAULT_MAX_RUNTIMES,
    ) -> None:
        self.home = home
        self.idle_timeout = idle_timeout
        self.socket_path = socket_path
        self.max_runtimes = max_runtimes
        # Runtime processes from spawn until reaped (starting, live or stopping): what the limit counts.
        self._processes: set[RuntimeProcess] = set()
        self._exit_waiters: list[asyncio.Future[None]] = []
        self.registry = Registry(home / "state.db")
        self.agents: dict[str, AgentSlot] = {r.agent_id: AgentSlot(r) for r in self.registry.all()}
        self.connections: set[Connection] = set()
        self.stopped = asyncio.Event()
        self._ids = count(1)
        self._shutting_down = False
        self._tasks: set[asyncio.Future[Any]] = set()

    def _spawn(self, coro: Any) -> None:
        """Run work in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- connections ----------------------------------------------------------------------------

    def hello(self, transport: str) -> bytes:
        caps = [transport, "streaming-deltas"]  # transport-scoped (§7): runtimes' own come in sync
        return orjson.dumps(
            {
                "type": "hello",
                "protocol_version": PROTOCOL_VERSION,
                "server_version": __version__,
                "capabilities": caps,
            }
        )

    def connected(self, conn: Connection) -> None:
        self.connections.add(conn)
        conn.send(self.hello(conn.transport))

    def disconnected(self, conn: Connection) -> None:
        """A closed connection is detached from every agent; their work goes on."""
        self.connections.discard(conn)
        for agent_id in list(conn.attached):
            self._detach(conn, agent_id)

    def _broadcast(self, event: dict[str, Any]) -> None:
        data = orjson.dumps(event)
        for conn in list(self.connections):
            conn.send(data)

    def _reply(
        self, conn: Connection, command: cmd.CommandBase, data: Any = None, *, agent_id: str | None = None
    ) -> None:
        out: dict[str, Any] = {"type": "response"}
        if command.id is not None:
            out["id"] = command.id
        if agent_id is not None:
            out["agent_id"] = agent_id
        out.update(command=command.type, success=True)
        if data is not None:
            out["data"] = data
        conn.send(orjson.dumps(out))

    def _fail(self, conn: Connection, error: ShardError, *, id: str | None, command: str | None) -> None:
        conn.send(error_response(error, id=id, command=command).to_json())

    # --- inbound --------------------------------------------------------------------------------

    async def handle(self, conn: Connection, record: bytes | Oversized) -> None:
        try:
            command = parse_command(record, orchestrator=True)
        except FrameError as exc:
            self._fail(conn, exc, id=exc.id, command=exc.command)
            return
        try:
            if isinstance(command, cmd.AgentCommand):
                await self._per_agent(conn, command)
            else:
                await self._orchestrator(conn, command)
        except ShardError as exc:
            self._fail(conn, exc, id=command.id, command=command.type)
        except Exception as exc:  # a bug or an OS failure: the client is answered, the daemon serves on
            why = f"{command.type} failed: {type(exc).__name__}: {exc}"
            sys.stderr.write(f"shard daemon: {why}\n")
            error = ShardError(ErrorCode.INTERNAL_ERROR, why)
            self._fail(conn, error, id=command.id, command=command.type)

    async def _per_agent(self, conn: Connection, command: cmd.AgentCommand) -> None:
        agent_id = command.agent_id
        if agent_id is None:
            raise ShardError(
                ErrorCode.NOT_ATTACHED, f"'{command.type}' needs an agent_id on a daemon connection"
            )
        slot = self._slot(agent_id)
        role = conn.attached.get(agent_id)
        if isinstance(command, cmd.PermissionResponse | cmd.UiResponse):
            self._answer(conn, slot, command, role)
            return
        if role is None:
            raise ShardError(
                ErrorCode.NOT_ATTACHED, f"this connection is not attached to {agent_id}; send agent.attach"
            )
        if command.type in _NEVER_WAKE and not slot.live:
            raise ShardError(
                ErrorCode.CONFLICT,
                f"the runtime of {agent_id} is stopped and {command.type} does not wake it",
            )
        await self._ensure_runtime(slot)
        self._forward(slot, command, conn)

    def _forward(
        self, slot: AgentSlot, command: cmd.CommandBase, conn: Connection | None, **extra: Any
    ) -> None:
        payload = command.to_wire()
        payload.pop("agent_id", None)  # the runtime's connection is bound to one agent
        payload.update(extra)
        self._cancel_reap(slot)
        if not self._dispatch(slot, payload, Forwarded(conn, command.id, command.type)):
            raise ShardError(ErrorCode.RUNTIME_START_FAILED, f"the runtime of {slot.agent_id} is gone; retry")

    def _internal(self, slot: AgentSlot, payload: dict[str, Any], then: Any) -> None:
        if not self._dispatch(slot, payload, Forwarded(None, None, payload["type"], then)) and then:
            then(_unanswered(payload["type"]))  # the runtime is gone: the waiter learns it now, not never

    def _dispatch(self, slot: AgentSlot, payload: dict[str, Any], fwd: Forwarded) -> bool:
        """Send a command to the runtime under a fresh daemon id, remembering who waits for the
        response; False when the runtime is gone."""
        did = f"d{next(self._ids)}"
        slot.forwarded[did] = fwd
        if slot.proc is not None and slot.proc.send(orjson.dumps({**payload, "id": did})):
            return True
        del slot.forwarded[did]
        return False

    # --- answers to broadcast requests (first valid one wins, §6.3) -----------------------------

    def _answer(
        self,
        conn: Connection,
        slot: AgentSlot,
        command: cmd.PermissionResponse | cmd.UiResponse,
        role: str | None,
    ) -> None:
        entry = slot.open_requests.get(command.request_id)
        delegated = entry is not None and conn in entry.delegated_to
        if role is None and not delegated:
            raise ShardError(ErrorCode.NOT_ATTACHED, f"this connection is not attached to {slot.agent_id}")
        if role != INTERACTIVE and not delegated:
            raise ShardError(ErrorCode.PERMISSION_DENIED, "an observer attachment cannot answer requests")
        if entry is None or entry.answered:
            self._reply(conn, command, agent_id=slot.agent_id)  # late or unknown: dropped silently
            return
        event = entry.event
        if isinstance(command, cmd.PermissionResponse):
            if event.get("type") != "permission_request":
                raise ShardError(
                    ErrorCode.INVALID_REQUEST, f"{shown(command.request_id)} is not a permission request"
                )
            ids = {c.get("id") for c in event.get("choices") or [] if isinstance(c, dict)}
            why = permission_answer_error(ids, command.choice_id)
        else:
            if event.get("type") != "ui_request":
                raise ShardError(
                    ErrorCode.INVALID_REQUEST, f"{shown(command.request_id)} is not a UI request"
                )
            _, why = ui_answer(event.get("kind", ""), event.get("options"), command.value)
        if why is not None:
            raise ShardError(ErrorCode.INVALID_REQUEST, why)
        entry.answered = True
        self._ensure_live(slot)
        self._forward(slot, command, None, source=f"{conn.transport}-client-{conn.number}")
        self._reply(conn, command, agent_id=slot.agent_id)

    def _ensure_live(self, slot: AgentSlot) -> None:
        if not slot.live:
            raise ShardError(ErrorCode.CONFLICT, f"the runtime of {slot.agent_id} is no longer running")

    # --- orchestrator commands (§10.1) ----------------------------------------------------------

    async def _orchestrator(self, conn: Connection, command: cmd.CommandBase) -> None:
        if isinstance(command, cmd.AgentList | cmd.AgentStatusQuery):
            if isinstance(command, cmd.AgentStatusQuery) and command.agent_id is not None:
                slot = self._slot(command.agent_id)
                self._reply(conn, command, {"agents": [slot.info()]})
            else:
                self._reply(conn, command, {"agents": [s.info() for s in self.agents.values()]})
        elif isinstance(command, cmd.AgentCreate):
            await self._create(conn, command)
        elif isinstance(command, cmd.AgentAttach):
            await self._attach(conn, command)
        elif isinstance(command, cmd.AgentDetach):
            self._slot(command.agent_id)
            self._detach(conn, command.agent_id)
            self._reply(conn, command)
        elif isinstance(command, cmd.AgentTerminate):
            slot = self._slot(command.agent_id)
            if slot.forgettable:
                self._forget(slot)
                result = AgentTerminateResult(deferred=False, forgotten=True)
            else:
                result = AgentTerminateResult(deferred=slot.live and slot.busy)
                if result.deferred:
                    slot.terminate_when_idle = True
                else:
                    await self._stop(slot)
            self._reply(conn, command, result.to_wire())
        elif isinstance(command, cmd.AgentKill):
            slot = self._slot(command.agent_id)
            if slot.proc is not None:
                await (slot.proc.kill() if command.force else slot.proc.kill(15))
            self._reply(conn, command)
        elif isinstance(command, cmd.DaemonShutdown):
            self._reply(conn, command)
            self._spawn(self.shutdown(force=bool(command.force)))
        else:
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"'{command.type}' is not available in this daemon yet"
            )

    def _forget(self, slot: AgentSlot) -> None:
        """Remove an agent that has nothing running from the registry; its session file stays (it can
        be adopted again). Told to everyone as ``agent_status_changed`` with ``detail: "forgotten"``:
        the protocol has no removal event, and this one already reaches every connection."""
        self.registry.remove(slot.agent_id)  # first: if the disk refuses, nothing has changed
        self._cancel_reap(slot)
        for conn in slot.attachments:
            conn.attached.pop(slot.agent_id, None)
        slot.attachments.clear()
        del self.agents[slot.agent_id]
        slot.runtime_state = "stopped"
        self._status_changed(slot, "forgotten")

    def _slot(self, agent_id: str) -> AgentSlot:
        slot = self.agents.get(agent_id)
        if slot is None:
            raise ShardError(ErrorCode.NOT_FOUND, f"no agent {shown(agent_id)}")
        return slot

    async def _create(self, conn: Connection, command: cmd.AgentCreate) -> None:
        for name in _DAEMON_SET_FIELDS:
            if getattr(command, name) is not None:
                raise ShardError(
                    ErrorCode.INVALID_REQUEST,
                    f"{name} is set by the daemon for managed children, not by clients",
                )
        expanded = os.path.expanduser(command.cwd)
        if not os.path.isabs(expanded):  # relative to what? the daemon's cwd is not the client's
            raise ShardError(
                ErrorCode.INVALID_REQUEST, f"cwd must be an absolute path, not {shown(command.cwd)}"
            )
        cwd = os.path.realpath(expanded)
        if not os.path.isdir(cwd):
            raise ShardError(ErrorCode.INVALID_REQUEST, f"cwd {shown(command.cwd)} is not a directory")
        if command.parent_agent_id is not None and command.parent_agent_id not in self.agents:
            raise ShardError(ErrorCode.NOT_FOUND, f"no parent agent {shown(command.parent_agent_id)}")
        model = command.model
        if model and command.provider and "/" not in model:
            model = f"{command.provider}/{model}"
        adopted = command.session_id is not None
        if adopted:
            assert command.session_id is not None
            if self.registry.by_session(command.session_id) is not None:
                raise ShardError(
                    ErrorCode.INVALID_REQUEST, f"session {shown(command.session_id)} is already adopted"
                )
            header = sessions.header_of(self.home, command.session_id)  # NOT_FOUND / SESSION_CORRUPT
            if os.path.realpath(str(header.get("cwd", ""))) != cwd:
                raise ShardError(
                    ErrorCode.INVALID_REQUEST,
                    f"session {shown(command.session_id)} belongs to another directory",
                )
        parent = self.agents.get(command.parent_agent_id) if command.parent_agent_id else None
        record = AgentRecord(
            agent_id=new_id("agent"),
            session_id=command.session_id or new_id("sess"),
            cwd=cwd,
            name=command.name,
            model=model,
            provider=command.provider,
            mode=command.mode,
            tools=command.tools,
            headless_policy=command.headless_policy or "deny",
            parent_agent_id=command.parent_agent_id,
            depth=parent.record.depth + 1 if parent else 0,
            adopted=adopted,
        )
        self.registry.add(record)  # the manifest, written atomically before the runtime starts
        slot = AgentSlot(record, adoption_overrides=adopted and bool(model or command.mode))
        self.agents[record.agent_id] = slot
        self._broadcast({"type": "agent_spawned", "agent_id": record.agent_id, "info": slot.info()})
        try:
            await self._ensure_runtime(slot)
        except ShardError as exc:  # the binding is kept for a retry: say which agent it is
            exc.data = {**(exc.data or {}), "agent_id": record.agent_id}
            raise
        self._reply(conn, command, {"agent_id": record.agent_id})

    async def _attach(self, conn: Connection, command: cmd.AgentAttach) -> None:
        """Resolves once the connection is attached (or the attach failed), so a client that sends
        ``agent.attach`` and then ``prompt`` without waiting gets them handled in that order."""
        slot = self._slot(command.agent_id)
        role = command.role or INTERACTIVE
        await self._ensure_runtime(slot)
        self._detach(conn, slot.agent_id)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def promote(response: dict[str, Any]) -> None:
            if not done.done():
                done.set_result(None)
            if conn.closed:
                return
            if not response.get("success"):
                error = ShardError(
                    ErrorCode.RUNTIME_START_FAILED,
                    f"the runtime of {slot.agent_id} exited before the attach completed; retry",
                )
                self._fail(conn, error, id=command.id, command=command.type)
                return
            sync = response.get("data") or {}
            self._reply(conn, command, {"status": sync.get("status", slot.status), "info": slot.info()})
            conn.send(orjson.dumps({**sync, "agent_id": slot.agent_id, "runtime_epoch": slot.epoch}))
            if role == INTERACTIVE:
                for entry in slot.open_requests.values():  # re-shown (§12.6)
                    conn.send(entry.tagged)
            slot.attachments[conn] = role
            conn.attached[slot.agent_id] = role
            self._responders_changed(slot)

        self._internal(slot, {"type": "runtime.sync"}, promote)
        await done

    def _detach(self, conn: Connection, agent_id: str) -> None:
        conn.attached.pop(agent_id, None)
        slot = self.agents.get(agent_id)
        if slot is not None and slot.attachments.pop(conn, None) is not None:
            self._responders_changed(slot)

    # --- responders and delegation (§6.3) -------------------------------------------------------

    def _ancestors(self, slot: AgentSlot) -> list[AgentSlot]:
        out, seen = [], {slot.agent_id}
        parent_id = slot.record.parent_agent_id
        while parent_id and parent_id not in seen and parent_id in self.agents:
            seen.add(parent_id)
            out.append(self.agents[parent_id])
            parent_id = self.agents[parent_id].record.parent_agent_id
        return out

    def _answerers(self, slot: AgentSlot) -> tuple[list[Connection], bool]:
        """Who can answer this agent's requests: its own interactive clients, else those of its
        nearest ancestor that has any (True: delegated)."""
        own = slot.interactive()
        if own:
            return own, False
        for ancestor in self._ancestors(slot):
            theirs = ancestor.interactive()
            if theirs:
                return theirs, True
        return [], False

    def _responders_changed(self, slot: AgentSlot) -> None:
        for affected in [slot, *[s for s in self.agents.values() if slot in self._ancestors(s)]]:
            if not affected.live:
                continue
            present = bool(self._answerers(affected)[0])
            if affected.responders_told != present:
                affected.responders_told = present
                self._internal(affected, {"type": "runtime.responders", "present": present}, None)
            if present:
                conns, delegated = self._answerers(affected)
                if delegated:  # re-show open requests to the ancestor's (new) clients
                    for entry in affected.open_requests.values():
                        for c in conns:
                            if c not in entry.delegated_to:
                                entry.delegated_to.add(c)
                                c.send(entry.tagged)

    # --- runtime supervision --------------------------------------------------------------------

    async def _ensure_runtime(self, slot: AgentSlot) -> None:
        if slot.live:
            return
        if slot.starting is None:
            # Decided and reserved in one step (no await): concurrent starts cannot both take the
            # last place or both pick the same runtime to stop.
            making_room = self._make_room(slot)
            slot.starting = asyncio.ensure_future(self._start(slot, making_room))
            slot.starting.add_done_callback(lambda f: f.cancelled() or f.exception())
        await asyncio.shield(slot.starting)

    def _make_room(self, slot: AgentSlot) -> RuntimeProcess | None:
        """Admit one more runtime under the limit: returns the runtime being stopped to make room
        (None: there was room), or raises a retryable RUNTIME_START_FAILED naming the limit."""
        occupants = [
            Occupant(s.agent_id, s.live and not s.busy, s.idle_since)
            for s in self.agents.values()
            if s is not slot and (s.starting is not None or s.live)
        ]
        admission = admit(occupants, self.max_runtimes)
        if not admission.allowed:
            limit = self.max_runtimes
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED,
                f"{limit} runtimes are running, the limit, and none is idle; retry once one is, or "
                "raise the limit (shard daemon --max-runtimes, or [daemon] max_runtimes in config.toml)",
                {"limit": limit, "retryable": True},
            )
        if admission.reap is None:
            return None
        return self._begin_stop(self.agents[admission.reap])

    async def _until(self, ready: Callable[[], bool]) -> None:
        """Wait until ``ready()``, checked again after each runtime process ends."""
        while not ready():
            waiter = asyncio.get_running_loop().create_future()
            self._exit_waiters.append(waiter)
            await waiter

    def _process_ended(self, proc: RuntimeProcess) -> None:
        self._processes.discard(proc)
        waiters, self._exit_waiters = self._exit_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _start(self, slot: AgentSlot, making_room: RuntimeProcess | None) -> None:
        try:
            if making_room is not None:
                await making_room.stop()
            # The previous generation must be gone (it holds the session's lock), and so must be
            # any runtime still exiting, so that the limit counts processes, not intentions.
            await self._until(lambda: slot.proc is None and len(self._processes) < self.max_runtimes)
            if self._shutting_down:  # the place was freed by the shutdown itself
                raise ShardError(ErrorCode.RUNTIME_START_FAILED, "the daemon is shutting down")
            self._set_runtime_state(slot, "starting")
            proc = RuntimeProcess(
                self._argv(slot),
                self._env(),
                lambda p, line: self._on_line(slot, p, line),
                lambda p, code, stderr: self._on_exit(slot, p, code, stderr),
            )
            self._processes.add(proc)
            try:
                await proc.start()
            except ShardError:
                self._process_ended(proc)  # start() killed and reaped it
                raise
        except ShardError:
            self._set_runtime_state(slot, "failed")
            raise
        finally:
            slot.starting = None
        slot.proc = proc
        slot.adoption_overrides = False
        if slot.record.started_at is None:
            slot.record.started_at = time.time()
            self._remember(slot, started_at=slot.record.started_at)
        slot.epoch += 1
        slot.capabilities = list(proc.hello.get("capabilities", []))
        slot.status = proc.sync.get("status", "idle")
        slot.responders_told = None
        self._set_runtime_state(slot, "running")
        self._responders_changed(slot)
        if not slot.responders_told:  # nobody attached: say so once, so the headless policy applies
            slot.responders_told = False
            self._internal(slot, {"type": "runtime.responders", "present": False}, None)
        if slot.epoch > 0:  # a replacement: attachments get a fresh authoritative sync (§9.1)
            fresh = orjson.dumps({**proc.sync, "agent_id": slot.agent_id, "runtime_epoch": slot.epoch})
            for conn in list(slot.attachments):
                conn.send(fresh)
        self._schedule_reap(slot)

    def _argv(self, slot: AgentSlot) -> list[str]:
        r = slot.record
        argv = [sys.executable, "-m", "shard", "agent", "--stdio", "--home", str(self.home)]
        argv += ["--session", r.session_id, "--cwd", r.cwd, "--headless-policy", r.headless_policy]
        fresh = not sessions.exists(self.home, r.session_id)
        if fresh:
            argv.append("--create")
        if fresh or slot.adoption_overrides:  # the session takes these and records them
            if r.model:
                argv += ["--model", r.model]
            if r.mode:
                argv += ["--mode", r.mode]
        if r.tools is not None:
            argv += ["--tools", ",".join(r.tools)]
        return argv

    def _env(self) -> dict[str, str]:
        return {**os.environ, "SHARD_HOME": str(self.home), "SHARD_DAEMON_SOCKET": str(self.socket_path)}

    def _set_runtime_state(self, slot: AgentSlot, state: str) -> None:
        if slot.runtime_state != state:
            slot.runtime_state = state
            self._status_changed(slot)

    def _status_changed(self, slot: AgentSlot, detail: str | None = None) -> None:
        event: dict[str, Any] = {
            "type": "agent_status_changed",
            "agent_id": slot.agent_id,
            "status": slot.status,
            "runtime_state": slot.runtime_state,
        }
        if detail:
            event["detail"] = detail
        self._broadcast(event)

    def _schedule_reap(self, slot: AgentSlot) -> None:
        self._cancel_reap(slot)
        if slot.live and not slot.busy:
            loop = asyncio.get_running_loop()
            slot.idle_since = loop.time()
            slot.reap_handle = loop.call_later(self.idle_timeout, lambda: self._spawn(self._reap(slot)))

    def _settle(self, slot: AgentSlot) -> None:
        """Work may have ended: a deferred terminate happens now, else the idle clock starts."""
        if slot.busy:
            return
        if slot.terminate_when_idle:
            self._spawn(self._stop(slot))
        else:
            self._schedule_reap(slot)

    def _cancel_reap(self, slot: AgentSlot) -> None:
        if slot.reap_handle is not None:
            slot.reap_handle.cancel()
            slot.reap_handle = None

    async def _reap(self, slot: AgentSlot) -> None:
        slot.reap_handle = None
        if slot.live and not slot.busy:
            await self._stop(slot)

    async def _stop(self, slot: AgentSlot) -> None:
        proc = self._begin_stop(slot)
        if proc is not None:
            await proc.stop()

    def _begin_stop(self, slot: AgentSlot) -> RuntimeProcess | None:
        """The synchronous half of a stop: stdin closed, state ``stopping``; the process to await."""
        self._cancel_reap(slot)
        slot.terminate_when_idle = False
        proc = slot.proc
        if proc is None or not proc.alive:
            return None
        self._set_runtime_state(slot, "stopping")
        proc.close_input()
        return proc

    def _on_exit(self, slot: AgentSlot, proc: RuntimeProcess, code: int | None, stderr: str) -> None:
        try:
            self._after_exit(slot, proc, code, stderr)
        finally:
            self._process_ended(proc)  # after the slot forgot it: waiters see the place free

    def _after_exit(self, slot: AgentSlot, proc: RuntimeProcess, code: int | None, stderr: str) -> None:
        if slot.proc is not proc:
            return
        crashed = not proc.stopping
        slot.proc = None
        self._cancel_reap(slot)
        for did, fwd in list(slot.forwarded.items()):  # nothing more will answer these
            slot.forwarded.pop(did)
            if fwd.then is not None:
                fwd.then(_unanswered(fwd.command))
            elif fwd.conn is not None:
                error = ShardError(ErrorCode.INTERNAL_ERROR, "the agent's runtime exited before answering")
                self._fail(fwd.conn, error, id=fwd.original_id, command=fwd.command)
        for rid, entry in list(slot.open_requests.items()):
            slot.open_requests.pop(rid)
            kind = "permission_resolved" if entry.event.get("type") == "permission_request" else "ui_resolved"
            closing: dict[str, Any] = {"type": kind, "agent_id": slot.agent_id, "request_id": rid}
            closing.update({"decision": "deny"} if kind == "permission_resolved" else {"value": None})
            closing["source"] = "runtime-exited"
            data = orjson.dumps(closing)
            for conn in {*slot.attachments, *entry.delegated_to}:
                conn.send(data)
        if crashed:
            slot.status = "error"
            slot.runtime_state = "failed"
            reason = f"the runtime exited unexpectedly (exit code {code})" + (
                f": {stderr[-300:]}" if stderr else ""
            )
            event: dict[str, Any] = {
                "type": "agent_exited",
                "agent_id": slot.agent_id,
                "runtime_state": "failed",
                "reason": reason,
            }
            if code is not None:
                event["exit_code"] = code
            self._broadcast(event)
            self._status_changed(slot)
        else:
            slot.status = "idle"
            self._set_runtime_state(slot, "stopped")

    # --- runtime output -------------------------------------------------------------------------

    def _on_line(self, slot: AgentSlot, proc: RuntimeProcess, line: bytes | Oversized) -> None:
        if slot.proc is not proc:
            return
        if isinstance(line, Oversized):
            self._on_oversized(slot, line)
            return
        if not line.startswith(b"{"):
            return
        if line.startswith(b'{"type":"message_delta"'):  # the hot path: tag, fan out, note the phase
            tagged = slot.tag + line[1:]
            for conn in list(slot.attachments):
                conn.send(tagged)
            phase = "thinking" if b'"kind":"thinking"' in line else "streaming"
            if phase != slot.phase:
                self._activity(
                    slot, {"type": "message_delta", "kind": "thinking" if phase == "thinking" else "text"}
                )
            return
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        kind = event.get("type")
        if kind == "response":
            self._on_response(slot, event)
            return
        tagged = slot.tag + line[1:]
        if kind in ("permission_request", "ui_request") and event.get("kind") != "notify":
            entry = OpenRequest(tagged, event)
            slot.open_requests[event["request_id"]] = entry
            conns, delegated = self._answerers(slot)
            if delegated:
                entry.delegated_to.update(conns)
                for conn in conns:
                    conn.send(tagged)
        elif kind in ("permission_resolved", "ui_resolved"):
            entry = slot.open_requests.pop(event.get("request_id", ""), None)
            if entry is not None:
                for conn in entry.delegated_to - set(slot.attachments):
                    conn.send(tagged)
        for conn in list(slot.attachments):
            conn.send(tagged)
        self._track(slot, event)

    def _on_oversized(self, slot: AgentSlot, record: Oversized) -> None:
        """A runtime line over the cap is dropped; when it was a response, its waiter is told."""
        msg_id, msg_type = peek_envelope(record.prefix)
        sys.stderr.write(
            f"shard daemon: the runtime of {slot.agent_id} wrote a {msg_type or 'message'} of"
            f" {record.size} bytes, over the cap; dropped\n"
        )
        fwd = slot.forwarded.pop(msg_id, None) if msg_type == "response" and msg_id else None
        if fwd is None:
            return
        if fwd.then is not None:
            fwd.then(_unanswered(fwd.command))
        elif fwd.conn is not None:
            why = f"the runtime's response was {record.size} bytes, over the cap"
            error = ShardError(ErrorCode.INTERNAL_ERROR, why)
            self._fail(fwd.conn, error, id=fwd.original_id, command=fwd.command)
        self._settle(slot)

    def _on_response(self, slot: AgentSlot, response: dict[str, Any]) -> None:
        fwd = slot.forwarded.pop(response.get("id", ""), None)
        if fwd is None:
            return
        if fwd.then is not None:
            fwd.then(response)
        elif fwd.conn is not None and fwd.command not in ("permission_response", "ui_response"):
            if fwd.original_id is None:
                response.pop("id", None)
            else:
                response["id"] = fwd.original_id
            fwd.conn.send(orjson.dumps({"agent_id": slot.agent_id, **response}))
        self._settle(slot)

    def _track(self, slot: AgentSlot, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "status":
            slot.status = event.get("status", slot.status)
            self._status_changed(slot, event.get("detail"))
            if slot.status in ACTIVE_STATUSES:
                self._cancel_reap(slot)
            else:
                self._settle(slot)
        elif kind == "model_changed":
            active = event.get("active") or {}
            self._remember(slot, model=active.get("id"), provider=active.get("provider"))
            slot.record.model, slot.record.provider = active.get("id"), active.get("provider")
            if isinstance(event.get("capabilities"), list):
                slot.capabilities = event["capabilities"]
        elif kind == "mode_changed":
            self._remember(slot, mode=event.get("mode"))
            slot.record.mode = event.get("mode")
        elif kind == "turn_end" and isinstance(event.get("usage"), dict):
            for k, v in event["usage"].items():
                if isinstance(v, int | float) and not isinstance(v, bool) and k != "context_tokens":
                    slot.usage[k] = slot.usage.get(k, 0) + v
        self._activity(slot, event)

    def _remember(self, slot: AgentSlot, **fields: Any) -> None:
        """Keep the registry's copy of what a runtime chose or did; the session stays the authority, so a
        failed write (a full disk) is said once on stderr and the daemon goes on."""
        try:
            self.registry.update(slot.agent_id, **fields)
        except ShardError as exc:
            sys.stderr.write(f"shard daemon: {exc.message}\n")

    def _activity(self, slot: AgentSlot, event: dict[str, Any]) -> None:
        change = phase_of(event, slot.status, slot.phase)
        if change is None:
            return
        slot.phase, tool = change
        out: dict[str, Any] = {
            "type": "agent_activity",
            "agent_id": slot.agent_id,
            "timestamp": time.time(),
            "phase": slot.phase,
            "status": slot.status,
        }
        if tool:
            out["tool_name"] = tool
        self._broadcast(out)

    # --- shutdown -------------------------------------------------------------------------------

    async def shutdown(self, *, force: bool) -> None:
        if self._shutting_down:
            return
        self._shutting_down = True
        slots = [s for s in self.agents.values() if s.proc is not None]
        if force:
            await asyncio.gather(*(s.proc.kill() for s in slots if s.proc), return_exceptions=True)
        else:  # graceful: active turns finish (a runtime ends its work before exiting on EOF)
            await asyncio.gather(*(self._stop(s) for s in slots), return_exceptions=True)
        for conn in list(self.connections):
            conn.close("the daemon is shutting down")
        with contextlib.suppress(Exception):
            self.registry.close()
        self.stopped.set()


def _unanswered(command: str) -> dict[str, Any]:
    """The response a waiter gets in place of one from a runtime that is gone."""
    return {"type": "response", "command": command, "success": False}

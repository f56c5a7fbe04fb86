"""The asyncio shell around the broker (DESIGN §2): it feeds the :class:`Broker` what happens — a
client's line, a connection closing, a runtime's output, start and exit, a timer — and performs the
effects it returns with sockets (``Connection``), ``RuntimeProcess`` children, loop timers and the
registry. Every protocol decision is the broker's (``broker.py``); nothing here decides one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, assert_never

import orjson

from shard import _secrets
from shard._home import private_dirs, write_private
from shard._hosts import HostConfig
from shard._provider_env import Holder
from shard._python import module_argv
from shard._trace import mark
from shard.daemon import sessions
from shard.daemon.activity import ActivityTracker
from shard.daemon.broker import Broker
from shard.daemon.connection import Connection
from shard.daemon.early_template import EarlyTemplate, runtime_env
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
    TimerKey,
    ToRuntime,
)
from shard.daemon.hosts.connections import Masters
from shard.daemon.hosts.launcher import LinkEnd, remote_launcher
from shard.daemon.hosts.remote_files import RemoteFiles
from shard.daemon.hosts.remote_git import RemoteGit
from shard.daemon.hosts.ssh import explain
from shard.daemon.jobs.settings import JobSettings
from shard.daemon.limits import DEFAULT_MAX_RUNTIMES
from shard.daemon.manifests import RegistryManifests
from shard.daemon.record import AgentRecord
from shard.daemon.registry import Registry
from shard.daemon.runtime_proc import RuntimeProcess
from shard.daemon.template_spawn import template_env
from shard.daemon.warm_pool import WarmPool
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import Oversized, Record

DEFAULT_IDLE_TIMEOUT = 600.0
CLOSE_GRACE = 2.0  # seconds WebSocket clients have to answer the close frame the shutdown sent them
INTERRUPT_CLOSE_GRACE = 0.5  # the same after Ctrl-C, whose whole stop takes about 2 s at most


class Daemon:
    def __init__(
        self,
        home: Path,
        *,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        socket_path: Path,
        max_runtimes: int = DEFAULT_MAX_RUNTIMES,
        fallback_model: str | None = None,
        jobs: JobSettings | None = None,
        warm_pool: bool = True,
        early_template: EarlyTemplate | None = None,
    ) -> None:
        self.home = home
        self.socket_path = socket_path
        self.registry = Registry(home / "state.db")
        settings = jobs or JobSettings()
        self.broker = Broker(
            self.registry.all(),
            RegistryManifests(home, self.registry, settings.definitions, settings.catalog),
            clock=time.monotonic,
            wall=time.time,
            idle_timeout=idle_timeout,
            max_runtimes=max_runtimes,
            subscribers=[ActivityTracker(time.time)],
            fallback_model=fallback_model,
        )
        self.broker.coordinator.configure(settings)
        self.hosts = settings.hosts
        self.masters = Masters(home, os.environ)  # the ssh client's own environment: agent, config
        # a remote runtime's own socket to the daemon (``hosts/link.py``), set by the server
        self.open_link: Callable[[Path, str], Awaitable[LinkEnd]] | None = None
        self.broker.workspaces.root = home / "worktrees"
        self.broker.workspaces.remote_git = self._remote_git
        self.broker.files.shard_home = str(home)
        self.broker.files.remote = self._remote_files
        # what a runtime it starts sees: the keys it holds, else its own environment (never a caller's)
        self.broker.provider_env = Holder(
            lambda name: _secrets.get(name) or None, lambda: [*_secrets.held(), *os.environ], _secrets.asked
        )
        self.stopped = asyncio.Event()
        self.close_grace = CLOSE_GRACE  # for WebSocket clients to answer the close frame at the end
        self.interrupts = 0
        self._clients: dict[Connection, Client] = {}
        self._conns: dict[Client, Connection] = {}
        self._procs: dict[Generation, RuntimeProcess] = {}
        self._remote: dict[Generation, HostConfig] = {}  # the runtimes on other hosts, and where
        self._timers: dict[TimerKey, asyncio.TimerHandle] = {}
        self._resumes: dict[Client, asyncio.Future[None]] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self.pool = WarmPool(
            home / "config.toml",
            lambda: template_env(home),
            lambda: sorted(_secrets.held()),
            enabled=warm_pool,
            early=early_template,
        )

    # --- connections ----------------------------------------------------------------------------

    def connected(self, conn: Connection) -> None:
        client, effects = self.broker.connect(conn.number, conn.transport, conn.label)
        self._clients[conn] = client
        self._conns[client] = conn
        conn.on_close = lambda: self.disconnected(conn)  # also when the outbound cap cuts it off
        self._perform(effects)

    def disconnected(self, conn: Connection) -> None:
        """A closed connection is detached from every agent; their work goes on."""
        client = self._clients.pop(conn, None)
        if client is not None:
            self._conns.pop(client, None)
            self._perform(self.broker.disconnect(client))

    async def handle(self, conn: Connection, record: bytes | Oversized) -> None:
        """One message from ``conn``; returns once its command is complete (a command that waits
        for a runtime holds the connection's next ones back, so they are handled in order)."""
        client = self._clients.get(conn)
        if client is None:
            return
        mark("daemon: record")
        self._perform(self.broker.receive(client, record))
        if client.waiting:
            waiter = asyncio.get_running_loop().create_future()
            self._resumes[client] = waiter
            await waiter

    def started(self) -> None:
        """Both listeners are up: the broker picks up what a previous daemon left, and the warm
        template starts importing."""
        self.pool.start()
        self._perform(self.broker.startup())

    async def shutdown(self, *, force: bool) -> None:
        self._perform(self.broker.shutdown(force=force))
        await self.stopped.wait()

    def interrupt(self) -> None:
        """Ctrl-C / SIGTERM: runtimes stop their work now (killed after a grace); WebSocket clients
        get a short moment to answer the close frame. A second one stops at once."""
        self.close_grace = 0.0 if self.interrupts else INTERRUPT_CLOSE_GRACE
        self.interrupts += 1
        self._perform(self.broker.interrupt())

    # --- effects --------------------------------------------------------------------------------

    def _perform(self, effects: Iterable[Effect]) -> None:
        conns = self._conns
        for effect in effects:
            if type(effect) is Send:  # the hot path first
                for client in effect.to:
                    conn = conns.get(client)
                    if conn is not None:
                        conn.send(effect.data)
            elif isinstance(effect, Broadcast):
                for conn in list(conns.values()):
                    conn.send(effect.data)
            elif isinstance(effect, ToRuntime):
                proc = self._procs.get(effect.gen)
                if proc is not None:
                    proc.send(effect.data)
            elif isinstance(effect, Resume):
                waiter = self._resumes.pop(effect.client, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
            else:
                self._perform_rare(effect)

    def _perform_rare(self, effect: Effect) -> None:
        if isinstance(effect, SpawnRuntime):
            self._background(self._start(effect.gen, effect.record, effect.overrides))
        elif isinstance(effect, StopRuntime | KillRuntime):
            proc = self._procs.get(effect.gen)
            if proc is None:
                return
            if isinstance(effect, StopRuntime) and effect.now:
                proc.interrupt()
            elif isinstance(effect, StopRuntime):
                self._background(proc.stop())
            else:
                self._background(proc.kill(signal.SIGKILL if effect.force else signal.SIGTERM))
        elif isinstance(effect, StartTimer):
            self._cancel_timer(effect.key)
            loop = asyncio.get_running_loop()
            self._timers[effect.key] = loop.call_later(effect.delay, self._fire, effect.key)
        elif isinstance(effect, CancelTimer):
            self._cancel_timer(effect.key)
        elif isinstance(effect, Remember):
            try:
                self.registry.update(effect.agent_id, **effect.fields)
            except ShardError as exc:  # the session stays the authority: said once, the daemon goes on
                sys.stderr.write(f"shard daemon: {exc.message}\n")
        elif isinstance(effect, Log):
            sys.stderr.write(effect.text + "\n")
        elif isinstance(effect, Offload):
            self._background(self._offload(effect))
        elif isinstance(effect, Stopped):
            self.pool.close()
            for conn in list(self._clients):
                conn.close("the daemon is shutting down")
            with contextlib.suppress(sqlite3.Error):
                self.registry.close()
            self.stopped.set()
        elif isinstance(effect, Send | Broadcast | ToRuntime | Resume):
            raise AssertionError(f"{type(effect).__name__} is performed on the hot path")
        else:
            assert_never(effect)

    async def _offload(self, effect: Offload) -> None:
        try:
            outcome: Any = await asyncio.to_thread(effect.call)
        except Exception as exc:  # the continuation decides what a failure means
            outcome = exc
        if not self.stopped.is_set():  # after a shutdown nobody is left to tell, and state.db is closed
            self._perform(self.broker.offloaded(effect.then, outcome))

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run work in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _fire(self, key: TimerKey) -> None:
        self._timers.pop(key, None)
        self._perform(self.broker.timer(key))

    def _cancel_timer(self, key: TimerKey) -> None:
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

    # --- runtime processes ----------------------------------------------------------------------

    async def _start(self, gen: Generation, record: AgentRecord, overrides: bool) -> None:
        host = None
        if record.host is not None:
            try:
                host = self._host(record.host, ErrorCode.RUNTIME_START_FAILED)
            except ShardError as gone:
                self._perform(self.broker.runtime_failed(gen, gone))
                return
            argv = self._runtime_args(record, overrides, fresh=record.started_at is None, remote=True)
            handoff = {"config": self._config_text() if host.config == "daemon" else None}
            if record.system_prompt:
                handoff["system_prompt"] = record.system_prompt
            link = None
            if record.subagents and self.open_link is not None:  # its subagent tools: a link of its own
                link = await self.open_link(self.masters.folder, record.agent_id)
            launch = remote_launcher(self.masters, host, os.environ, handoff, link)
            self._remote[gen] = host
        else:
            argv, launch = self._argv(record, overrides), self.pool.launch
        proc = RuntimeProcess(
            argv,
            self._env(record.subagents),
            lambda _, line: self._on_line(gen, line),
            lambda _, code, stderr: self._on_exit(gen, code, stderr),
            launch=launch,
        )
        self._procs[gen] = proc
        try:
            await proc.start()
        except ShardError as exc:  # start() killed and reaped it
            self._procs.pop(gen, None)
            self._remote.pop(gen, None)
            if host is not None and not exc.message.startswith(f"host {host.name} "):
                exc = ShardError(exc.code, explain(host, exc.message))
            self._perform(self.broker.runtime_failed(gen, exc))
            return
        self._perform(self.broker.runtime_ready(gen, proc.hello, proc.sync))

    def _on_line(self, gen: Generation, record: Record) -> None:
        try:
            if gen in self._remote and _FULL_DISK in record:  # a dict miss for every local line
                record = _naming_host(self._remote[gen], record)
            if isinstance(record, Oversized):
                self._perform(self.broker.runtime_oversized(gen, record))
            else:
                self._perform(self.broker.runtime_line(gen, record))
        except Exception as exc:  # the read loop must go on while the child runs: said, not raised
            sys.stderr.write(f"shard daemon: a line of agent {gen.agent_id}'s runtime failed: {exc!r}\n")

    def _on_exit(self, gen: Generation, code: int | None, stderr: str) -> None:
        self._procs.pop(gen, None)
        host = self._remote.pop(gen, None)
        if host is not None and code not in (0, None) and stderr:
            stderr = explain(host, stderr, code)
        self._perform(self.broker.runtime_exited(gen, code, stderr))

    def _argv(self, r: AgentRecord, overrides: bool) -> list[str]:
        argv = module_argv("shard", "agent", "--stdio", "--home", str(self.home))
        argv += self._runtime_args(r, overrides, fresh=not sessions.exists(self.home, r.session_id))
        if r.system_prompt:  # a file, not an argument: /proc/<pid>/cmdline is readable by every user
            path = self.home / "prompts" / f"{r.agent_id}.md"
            private_dirs(path.parent)
            write_private(path, r.system_prompt.encode())
            argv += ["--system-prompt-file", str(path)]
        return argv

    @staticmethod
    def _runtime_args(r: AgentRecord, overrides: bool, *, fresh: bool, remote: bool = False) -> list[str]:
        """The runtime's arguments after ``--home``. A session on another host is opened there, or
        made with its id when it is not there yet (``--create`` always): the daemon cannot look."""
        argv = ["--session", r.session_id, "--cwd", r.cwd, "--headless-policy", r.headless_policy]
        argv += ["--agent-id", r.agent_id]
        if fresh or remote:
            argv.append("--create")
        if fresh and r.parent_agent_id is not None:  # its first prompt is a private task: never a title
            argv.append("--delegated")
        if fresh or overrides:  # the session takes these and records them
            if r.model:
                argv += ["--model", r.model]
            if r.mode:
                argv += ["--mode", r.mode]
        if r.tools is not None:
            argv += ["--tools", ",".join(r.tools)]
        if r.sandbox is not None:
            argv += ["--sandbox", r.sandbox]
        return argv

    def _host(self, name: str, code: ErrorCode = ErrorCode.INVALID_REQUEST) -> HostConfig:
        """The [[hosts]] entry ``name`` as config.toml says now; ``code`` when it is gone."""
        host = self.hosts(name) if self.hosts is not None else None
        if host is None:
            raise ShardError(code, f"host {name} is not in config.toml ([[hosts]]) any more")
        return host

    def _remote_git(self, name: str) -> RemoteGit:
        host = self._host(name)
        return RemoteGit(host, self.masters.socket(host))

    def _remote_files(self, name: str) -> RemoteFiles:
        host = self._host(name)
        return RemoteFiles(host, self.masters.socket(host))

    def _config_text(self) -> str:
        """config.toml as the daemon reads it now, for a runtime on a host that uses the daemon's
        providers (empty: none, so the host's own file is not read instead)."""
        try:
            return (self.home / "config.toml").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def _env(self, subagents: bool = True) -> dict[str, str]:
        """A runtime's environment; the daemon's socket in it is what offers the subagent tools."""
        return runtime_env(self.home, self.socket_path, subagents=subagents)


_FULL_DISK = b"No space left on device"


def _naming_host(host: HostConfig, record: Record) -> Record:
    """A runtime's error about its host's full disk, said as one line naming the host and the fix."""
    if isinstance(record, Oversized):
        return record
    try:
        event = orjson.loads(record)
    except orjson.JSONDecodeError:
        return record
    if (
        not isinstance(event, dict)
        or event.get("type") != "error"
        or not isinstance(event.get("message"), str)
    ):
        return record
    event["message"] = explain(host, event["message"])
    return orjson.dumps(event)

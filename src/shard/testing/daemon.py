"""Drive a real ``shard daemon`` and its clients in tests: :class:`DaemonProcess` starts one (on a
free port, in its own SHARD_HOME), :class:`UnixClient` and :class:`WsClient` speak the protocol to it
over the unix socket and the WebSocket. A WebSocket client goes through the real browser flow
(``shard.testing.web``): the daemon's first :meth:`DaemonProcess.ws` enrolls a browser, and every one
then takes its own single-use ticket from ``/bootstrap``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from shard.testing.agent_process import shard_command, under_umask
from shard.testing.forked import DAEMON, ForkedProcess, TemplateUnavailable, TestTemplate, forkable
from shard.testing.reader import DEFAULT_TIMEOUT, MessageReader
from shard.testing.web import Browser, ws_protocols


class DaemonProcess:
    # Where a test starts no runtime, its daemons skip the warm template (``--cold-start``): a
    # template is a second interpreter that imports the whole runtime (~0.35 CPU-s) only to be
    # forked from, and the suite starts hundreds of daemons. Set by tests/conftest.py from the
    # ``no_local_runtimes`` marker; a test so marked that does start a runtime still gets one, spawned cold.
    cold_by_default = False

    @classmethod
    @contextlib.contextmanager
    def cold_while(cls, cold: bool) -> Iterator[None]:
        """Daemons started inside start cold if ``cold`` (or if an outer scope said so)."""
        before = cls.cold_by_default
        cls.cold_by_default = before or cold
        try:
            yield
        finally:
            cls.cold_by_default = before

    def __init__(
        self, home: Path, proc: asyncio.subprocess.Process | ForkedProcess, info: dict[str, Any]
    ) -> None:
        self.home = home
        self.proc = proc
        self.port: int = info["port"]
        self.socket = Path(info["socket"])
        self.clients: list[MessageReader] = []
        self.output: list[str] = []  # what the daemon printed (stdout and stderr), for assertions
        self.startup: list[str] = []  # the notices it printed before it listened (a prefix of output)
        self._drain: asyncio.Future[None] | None = None
        self._browser: Browser | None = None
        self.enrollment_link: str | None = None  # the link printed at startup, if it printed one

    @classmethod
    async def start(
        cls,
        home: Path,
        *args: str,
        env: dict[str, str] | None = None,
        umask: int | None = None,
        prefix: tuple[str, ...] = (),
        cold: bool | None = None,
        cwd: Path | None = None,
    ) -> DaemonProcess:
        """Start a daemon on ``home`` (which it creates if needed) and wait until it listens;
        ``prefix`` is a command that execs it (``setpriv …``: same pid). It is forked from this
        process's daemon template when that is what a cold start would be (``forked.forkable``),
        else spawned; ``cold`` forces one or the other. ``cwd``: spawned there (else in this
        process's folder)."""
        if cls.cold_by_default and "--cold-start" not in args:
            args = (*args, "--cold-start")
        info_file = home / "daemon.json"
        with contextlib.suppress(FileNotFoundError):
            info_file.unlink()
        argv = shard_command("daemon", "--home", str(home), "--port", "0", *args)
        full_env = {**os.environ, "SHARD_HOME": str(home), **(env or {})}
        proc = (
            await cls._forked(argv, full_env)
            if cwd is None
            and (cold is False or (cold is None and not prefix and forkable(env, umask, takes_keys=True)))
            else None
        )
        if proc is None:
            proc = await asyncio.create_subprocess_exec(
                *prefix,
                *under_umask(argv, umask),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=full_env,
                cwd=cwd,
            )
        assert proc.stdout is not None
        early: list[str] = []  # notices the daemon printed before it listened
        while True:
            line = await asyncio.wait_for(proc.stdout.readline(), DEFAULT_TIMEOUT)
            if not line:
                raise RuntimeError(f"the daemon exited before listening: {early}")
            text = line.decode("utf-8", errors="replace").rstrip("\n")
            if text.startswith("shard daemon: ws://"):  # the banner, written once it listens
                break
            early.append(text)
        daemon = cls(home, proc, json.loads(info_file.read_text()))
        links = [line.rsplit(" ", 1)[1] for line in early if "no browser is enrolled" in line]
        daemon.enrollment_link = links[0] if links else None
        daemon.output.extend(early)
        daemon.startup = list(early)
        daemon._drain = asyncio.ensure_future(daemon._drain_output())
        return daemon

    @staticmethod
    async def _forked(argv: list[str], env: dict[str, str]) -> ForkedProcess | None:
        try:
            return await TestTemplate.shared(DAEMON).fork(argv, env, Path.cwd(), 1 << 20, merge_stderr=True)
        except TemplateUnavailable:
            return None

    async def _drain_output(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.output.append(line.decode("utf-8", errors="replace").rstrip("\n"))

    async def unix(self) -> UnixClient:
        client = await UnixClient.connect(self.socket)
        self.clients.append(client)
        return client

    async def browser(self) -> Browser:
        """The browser this daemon's WebSocket clients share (enrolled on first use)."""
        if self._browser is None:
            self._browser = await Browser.enroll(self.port, self.socket)
        return self._browser

    async def ticket(self) -> str:
        """A fresh single-use WS ticket for :meth:`browser`, bound to the loopback origin."""
        return await (await self.browser()).ticket()

    async def ws(self, origin: str | None = "default", host: str | None = None) -> WsClient:
        """An authenticated WebSocket client: a fresh ticket, then the upgrade with ``origin`` and
        ``host`` (defaults: the loopback ones the ticket is bound to)."""
        ticket = await self.ticket()
        client = await WsClient.connect(self.port, origin=origin, host=host, protocols=ws_protocols(ticket))
        self.clients.append(client)
        return client

    async def stop(self) -> int:
        """SIGTERM (as Ctrl-C: runtimes stop their work, killed after a short grace) and wait."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), DEFAULT_TIMEOUT)
        return await self.kill()

    async def kill(self) -> int:
        """SIGKILL (if still running) and wait; ``output`` then holds everything the daemon printed."""
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.close()
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        if self._drain is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drain, DEFAULT_TIMEOUT)
        return self.proc.returncode if self.proc.returncode is not None else -1


class UnixClient(MessageReader):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__()
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, path: Path) -> UnixClient:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 27)
        client = cls(reader, writer)
        hello = await client.next()
        assert hello["type"] == "hello", hello
        return client

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def _receive(self, timeout: float) -> dict[str, Any]:
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        if not line:
            raise EOFError("the daemon closed the connection")
        return orjson.loads(line)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


class WsClient(MessageReader):
    def __init__(self, session: Any, ws: Any) -> None:
        super().__init__()
        self.session = session
        self.ws = ws

    @classmethod
    async def connect(
        cls,
        port: int,
        origin: str | None = "default",
        host: str | None = None,
        protocols: tuple[str, ...] = (),
    ) -> WsClient:
        import aiohttp

        headers = {}
        if origin is not None:
            headers["Origin"] = f"http://127.0.0.1:{port}" if origin == "default" else origin
        if host is not None:
            headers["Host"] = host
        session = aiohttp.ClientSession()
        try:
            ws = await session.ws_connect(
                f"http://127.0.0.1:{port}/ws", headers=headers, max_msg_size=1 << 27, protocols=protocols
            )
        except BaseException:
            await session.close()
            raise
        client = cls(session, ws)
        hello = await client.next()
        assert hello["type"] == "hello", hello
        return client

    terminator = b""  # one message per text frame

    async def send_raw(self, data: bytes) -> None:
        await self.ws.send_str(data.decode())

    async def _receive(self, timeout: float) -> dict[str, Any]:
        import aiohttp

        msg = await asyncio.wait_for(self.ws.receive(), timeout)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise EOFError(f"the daemon closed the WebSocket ({msg.type}, {msg.data!r}, {msg.extra!r})")
        return orjson.loads(msg.data)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()
        await self.session.close()

"""One multiplexed SSH connection per host, owned by the daemon (``ssh -M``, ``ControlPersist=no``).

The first runtime for a host starts its master and waits until the master's socket exists (it is
bound once the connection is authenticated) or the master exits (then its stderr, read to the end,
says why, in one line naming the host). Every later runtime there goes over that socket: no new
handshake. A master that dies (the connection dropped) takes its runtimes with it; the next start
makes a new one. ``close()`` ends them all with the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path

from shard._home import private_dirs
from shard._hosts import HostConfig
from shard._prctl import PR_SET_PDEATHSIG, prctl
from shard.daemon.hosts import ssh
from shard.protocol.errors import ErrorCode, ShardError

CONNECT_TIMEOUT = 30.0  # ssh's own ConnectTimeout is 15 s; authentication can take a while more
_POLL = 0.005


class _Master:
    def __init__(self, proc: asyncio.subprocess.Process, socket: Path) -> None:
        self.proc = proc
        self.socket = socket
        self.stderr = b""
        self.reader = asyncio.ensure_future(self._read())
        self.connected_in: float | None = None

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr = (self.stderr + chunk)[-8192:]

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None


class Masters:
    def __init__(self, home: Path, env: Mapping[str, str]) -> None:
        self.folder = ssh.control_dir(home)
        self.env = dict(env)
        self._masters: dict[Path, _Master] = {}
        self._starting: dict[Path, asyncio.Future[_Master]] = {}
        self._carried: dict[Path, int] = {}  # runtimes on each connection (started or starting)

    def socket(self, host: HostConfig, index: int = 0) -> Path:
        return ssh.control_path(self.folder, host, index)

    async def take(self, host: HostConfig) -> Path:
        """A connection with room for one more runtime (``host.sessions`` each: sshd refuses more),
        started if none has room; the caller gives it back with :meth:`release`."""
        index = 0
        while self._carried.get(self.socket(host, index), 0) >= host.sessions:
            index += 1
        path = self.socket(host, index)
        self._carried[path] = self._carried.get(path, 0) + 1
        try:
            return await self.ensure(host, index)
        except BaseException:
            self.release(path)
            raise

    def release(self, path: Path) -> None:
        left = self._carried.get(path, 0) - 1
        if left > 0:
            self._carried[path] = left
        else:
            self._carried.pop(path, None)

    def live(self) -> int:
        return sum(1 for m in self._masters.values() if m.alive)

    def pids(self) -> list[int]:
        return [m.proc.pid for m in self._masters.values() if m.alive]

    async def ensure(self, host: HostConfig, index: int = 0) -> Path:
        """The socket of a live master for ``host`` (its ``index``-th connection), started now if there
        is none; RUNTIME_START_FAILED with one line naming the host and the fix when it cannot connect."""
        path = self.socket(host, index)
        master = self._masters.get(path)
        if master is not None and master.alive and path.exists():
            return path
        pending = self._starting.get(path)
        if pending is None:
            pending = asyncio.ensure_future(self._start(host, path))
            self._starting[path] = pending
            pending.add_done_callback(lambda _: self._starting.pop(path, None))
        master = await asyncio.shield(pending)
        return master.socket

    async def _start(self, host: HostConfig, path: Path) -> _Master:
        old = self._masters.pop(path, None)
        if old is not None:
            await _end(old)
        private_dirs(self.folder)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a master that died with an earlier daemon
        began = time.monotonic()
        prctl()
        try:
            proc = await asyncio.create_subprocess_exec(
                *ssh.master_argv(host, path),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                start_new_session=True,  # Ctrl-C on the daemon's terminal does not cut its hosts off
                preexec_fn=_die_with_the_daemon,
            )
        except OSError as exc:
            raise ShardError(
                ErrorCode.RUNTIME_START_FAILED, f"host {host.name}: cannot run ssh: {exc.strerror or exc}"
            ) from None
        master = _Master(proc, path)
        deadline = began + CONNECT_TIMEOUT
        while not path.exists():
            if proc.returncode is not None or time.monotonic() > deadline:
                if proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                await proc.wait()
                await master.reader
                why = master.stderr.decode("utf-8", "replace") or "connection timed out"
                raise ShardError(ErrorCode.RUNTIME_START_FAILED, ssh.explain(host, why, proc.returncode))
            await asyncio.sleep(_POLL)
        master.connected_in = time.monotonic() - began
        self._masters[path] = master
        return master

    async def close(self) -> None:
        masters = list(self._masters.values())
        self._masters.clear()
        await asyncio.gather(*(_end(m) for m in masters), return_exceptions=True)


def _die_with_the_daemon() -> None:
    """In the master, before ``exec``: a daemon that ends without ``close()`` (killed outright, a
    crash) takes its connections with it. ``ssh -M -N`` reads nothing and waits on the connection,
    so it lived on, holding a session on the host, for as long as the host kept it."""
    call = prctl()  # looked up before the fork (in _start): nothing is imported in the child
    if call is not None:
        call(PR_SET_PDEATHSIG, signal.SIGTERM)


async def _end(master: _Master) -> None:
    if master.alive:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(master.proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(master.proc.wait(), 5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(master.proc.pid, signal.SIGKILL)
            await master.proc.wait()
    master.reader.cancel()
    with contextlib.suppress(FileNotFoundError):
        master.socket.unlink()

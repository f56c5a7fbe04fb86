"""Drive a real ``shard agent --stdio`` process over its pipes."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from pathlib import Path
from typing import Any

import orjson

from shard._python import module_argv
from shard.testing.forked import RUNTIME, ForkedProcess, TemplateUnavailable, TestTemplate, forkable
from shard.testing.reader import DEFAULT_TIMEOUT, MessageReader

_LIMIT = 256 * 1024 * 1024  # a line of the runtime's output may be this long


def shard_command(*args: str) -> list[str]:
    """The argv that runs ``shard`` with this interpreter (no PATH lookup), as Shard starts one."""
    return module_argv("shard", *args)


async def run_shard(
    home: Path,
    cwd: Path,
    *args: str,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    cold: bool | None = None,
) -> tuple[int, bytes, bytes]:
    """``shard ARGS`` run to its end in ``cwd`` on SHARD_HOME ``home`` (``env`` added to this
    process's environment), its stdin at its end: (exit status, stdout, stderr). Forked from this
    process's test template when that is what a cold start would be (``forked.forkable``, as for a
    process that takes keys), else spawned; ``cold`` forces one or the other."""
    full_env = {**os.environ, "SHARD_HOME": str(home), **(env or {})}
    fork = cold is False or (cold is None and forkable(env, None, takes_keys=True))
    proc = await _started(shard_command(*args), full_env, cwd, fork=fork)
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdin.close()
    out, err, code = await asyncio.wait_for(
        asyncio.gather(proc.stdout.read(), proc.stderr.read(), proc.wait()), timeout
    )
    return code, out, err


async def start_shard(
    *args: str, env: dict[str, str], cwd: Path, preload: tuple[str, ...] = RUNTIME
) -> asyncio.subprocess.Process | ForkedProcess:
    """``shard ARGS`` in ``cwd`` with exactly ``env``, a pipe for each of its stdin, stdout and stderr:
    forked from this process's template importing ``preload`` first when a fork is what a cold start
    would be (``forked.forkable``, as for a process that takes keys), else spawned."""
    fork = forkable(env, None, takes_keys=True)
    return await _started(shard_command(*args), env, cwd, fork=fork, preload=preload)


async def _started(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    *,
    fork: bool,
    umask: int | None = None,
    preload: tuple[str, ...] = RUNTIME,
) -> asyncio.subprocess.Process | ForkedProcess:
    """``argv`` with a pipe for each of its stdin, stdout and stderr: forked from this process's test
    template of ``preload`` if ``fork`` (and the template serves), else spawned (under ``umask``, if
    one)."""
    if fork:
        with contextlib.suppress(TemplateUnavailable):
            return await TestTemplate.shared(preload).fork(argv, env, cwd, _LIMIT)
    return await asyncio.create_subprocess_exec(
        *under_umask(argv, umask),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        limit=_LIMIT,
    )


def under_umask(argv: list[str], umask: int | None) -> list[str]:
    """``argv`` run with this umask (through ``sh``, which then execs it: same pid), or unchanged."""
    if umask is None:
        return argv
    return ["/bin/sh", "-c", f'umask {umask:03o} && exec "$@"', "sh", *argv]


_HANDOVERS = itertools.count()


class AgentProcess(MessageReader):
    """A running agent. Events are read in order; nothing is skipped unless a method says so."""

    def __init__(self, proc: asyncio.subprocess.Process | ForkedProcess) -> None:
        super().__init__()
        self.proc = proc
        # hello and sync, once ``handshake`` has read them (a shared runtime's tests look at them)
        self.greeting: tuple[dict[str, Any], dict[str, Any]] | None = None
        self.home: Path | None = None  # its SHARD_HOME, when ``start`` spawned it

    @classmethod
    async def start(
        cls,
        home: Path,
        cwd: Path,
        *args: str,
        env: dict[str, str] | None = None,
        umask: int | None = None,
        cold: bool | None = None,
    ) -> AgentProcess:
        """A runtime on ``home`` in ``cwd``: forked from this process's test template (as the
        daemon forks its runtimes) when that is what a cold start would be (``forked.forkable``),
        else spawned; ``cold`` forces one or the other."""
        full_env = {**os.environ, "SHARD_HOME": str(home), **(env or {})}
        fork = cold is False or (cold is None and forkable(env, umask))
        agent = cls(
            await _started(shard_command("agent", "--stdio", *args), full_env, cwd, fork=fork, umask=umask)
        )
        agent.home = home
        return agent

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def _receive(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            stderr = b""
            if self.proc.stderr is not None:
                stderr = await asyncio.wait_for(self.proc.stderr.read(), timeout)
            raise EOFError(f"agent closed stdout; stderr: {stderr.decode(errors='replace')}")
        assert line.endswith(b"\n"), "every message ends with LF"
        return orjson.loads(line)

    async def handshake(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Read ``hello`` and ``sync`` (asserting they come first, in that order)."""
        hello = await self.next()
        assert hello["type"] == "hello", hello
        sync = await self.next()
        assert sync["type"] == "sync", sync
        self.greeting = (hello, sync)
        return hello, sync

    async def finish(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Close stdin and wait for the exit code (the agent finishes its work first)."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        await asyncio.wait_for(self.proc.wait(), timeout)
        return self.proc.returncode if self.proc.returncode is not None else -1

    async def hand_over(self, timeout: float = DEFAULT_TIMEOUT) -> AgentProcess:
        """Make a runtime shared by several tests ready for the next one, so that no test reads what
        another left: an abort ends whatever work is going (a turn a test left behind, even one
        waiting on a permission, or one just started; with nothing running it does nothing), all
        that comes before its answer is read — every event of the work it ended comes before it —
        and ``seen`` starts empty."""
        assert self.proc.returncode is None, f"the shared runtime has exited ({self.proc.returncode})"
        await self.request({"type": "abort", "id": f"handover-{next(_HANDOVERS)}"}, timeout)
        self.seen = []
        return self

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    async def stderr_text(self) -> str:
        assert self.proc.stderr is not None
        return (await self.proc.stderr.read()).decode(errors="replace")


class Runtimes:
    """The runtimes a fixture starts, each past its handshake, all killed by ``close`` (its end)."""

    def __init__(self) -> None:
        self.started: list[AgentProcess] = []

    async def start(self, home: Path, cwd: Path, *args: str, **options: Any) -> AgentProcess:
        agent = await AgentProcess.start(home, cwd, *args, **options)
        self.started.append(agent)
        await agent.handshake()
        return agent

    async def close(self) -> None:
        for agent in self.started:
            await agent.kill()

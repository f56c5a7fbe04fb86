"""``bash``: run a shell command in the agent's working directory.

The command runs as ``bash -c`` in its own process group (session), with stdin from /dev/null and
stdout+stderr merged. Abort and timeout (default 120 s, per call up to an hour) kill the whole group
— SIGTERM, then SIGKILL a second later — so nothing it started survives. When the command itself
exits, reading stops after a short drain even if a backgrounded child still holds the output pipe
open, so ``server &`` cannot hang the turn (such a child is left running, and loses its pipe).

Output keeps its first 20 KB and last 30 KB; when more was produced, the whole of it is in a spill
file the model can read with ``read``, and the text says where. The exit code is structured
(``exit_code``); the model sees it as ``[exit code: N]`` (history assembly, PROTOCOL §9.4).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from pydantic import Field

from shard._home import open_private, private_dirs
from shard.agent.sandbox.places import CREATED_NEVER, ROOT_PLACES, Unconfinable
from shard.agent.sandbox.proxy import HostProxy, proxy_for
from shard.agent.tools.base import Tool, ToolContext, ToolFailure, ToolOutput, ToolParams
from shard.protocol.content import TextContent
from shard.protocol.permissions import PermissionDetail
from shard.protocol.render import RenderDescriptor

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 3600.0
HEAD_BYTES = 20 * 1024
TAIL_BYTES = 30 * 1024
DRAIN_AFTER_EXIT = 0.25  # seconds to keep reading once the command has exited
KILL_GRACE = 1.0


class BashParams(ToolParams):
    command: str = Field(min_length=1, description="The shell command to run (bash).")
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        description=f"Seconds before the command is killed (default {int(DEFAULT_TIMEOUT)}).",
    )
    sandbox: bool = Field(
        default=True,
        description="When a sandbox is in use: false runs the command outside it (it needs the network, "
        "or writes outside the project), which asks the user first; say why in reason.",
    )
    reason: str | None = Field(
        default=None, max_length=500, description="Why it must run outside the sandbox."
    )


class BashTool(Tool[BashParams]):
    name = "bash"
    description = (
        "Run a shell command in the working directory (bash -c; stdin is empty; stdout and stderr "
        f"are merged). Killed after {int(DEFAULT_TIMEOUT)} s unless timeout says otherwise. Long "
        "output keeps its start and end, with the full text saved to a file you can read. Start "
        "long-running background processes with their output redirected to a file."
    )
    params = BashParams
    read_only = False

    def start_render(self, args: BashParams, ctx: ToolContext) -> RenderDescriptor | None:
        return None  # the command shows once, in the call line; results carry exit_code/duration_ms

    def confined(self, args: BashParams, ctx: ToolContext) -> bool:
        sandbox = ctx.sandbox
        if sandbox is None or not sandbox.active or not args.sandbox:
            return False
        if ctx.confinable is None:
            ctx.confinable = sandbox.refusal(ctx.cwd) is None
        return ctx.confinable

    def escapes(self, args: BashParams, ctx: ToolContext) -> bool:
        return ctx.sandbox is not None and ctx.sandbox.active and not self.confined(args, ctx)

    def describe(self, args: BashParams, ctx: ToolContext) -> tuple[str, list[PermissionDetail]]:
        details = [
            PermissionDetail(label="command", value=args.command, format="command"),
            PermissionDetail(label="in", value=str(ctx.cwd), format="path"),
        ]
        if args.timeout:
            details.append(PermissionDetail(label="timeout", value=f"{args.timeout:g} s", format="text"))
        sandbox = ctx.sandbox
        if self.confined(args, ctx) and sandbox is not None:
            network = "network on" if sandbox.network else "no network"
            where = "inside the sandbox: writes only in the working directory, " + network
            details.append(PermissionDetail(label="sandbox", value=where, format="text"))
        elif sandbox is not None and sandbox.active:
            refused = sandbox.refusal(ctx.cwd) if args.sandbox else None
            why = refused or f"the model asks to run it unconfined: {args.reason or 'no reason given'}"
            details.append(PermissionDetail(label="outside the sandbox", value=why, format="text"))
        return "Run this command?", details

    async def execute(self, args: BashParams, ctx: ToolContext) -> ToolOutput:
        shell = shutil.which("bash") or "/bin/sh"
        argv, env = [shell, "-c", args.command], ctx.env
        sandbox, proxy = ctx.sandbox, None
        with contextlib.ExitStack() as held:
            if self.confined(args, ctx) and sandbox is not None:
                if sandbox.allow_hosts and not sandbox.network:
                    proxy = await proxy_for(sandbox.allow_hosts)
                socket = proxy.socket_path if proxy else None
                try:  # held until the command is over: what it must not create stays guarded
                    argv = held.enter_context(sandbox.call(argv, ctx.cwd, socket))
                except Unconfinable as exc:  # since the gate let it run confined: it does not run
                    advice = "run it with sandbox: false and a reason (the user is asked)"
                    raise ToolFailure(f"{exc}; {advice}") from None
                env = sandbox.environment(ctx.env)
            return await self._run(argv, env, shell, args, ctx, proxy)

    async def _run(
        self,
        argv: list[str],
        env: dict[str, str] | None,
        shell: str,
        args: BashParams,
        ctx: ToolContext,
        proxy: HostProxy | None,
    ) -> ToolOutput:
        denied_before = len(proxy.denied) if proxy else 0
        # Popen, not asyncio's subprocess: asyncio's Process.wait() also waits for the pipes to
        # close, which a backgrounded child holding stdout would postpone forever.
        try:
            proc = subprocess.Popen(  # noqa: ASYNC220 — fork+exec is quick; see the comment above
                argv,
                cwd=ctx.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_default_signals,
            )
        except OSError as exc:
            raise ToolFailure(f"cannot start {shell}: {exc.strerror}") from None
        output = _Output(ctx)
        timeout = args.timeout or DEFAULT_TIMEOUT
        try:
            await asyncio.wait_for(_collect(proc, output), timeout)
        except TimeoutError:
            await _kill_group(proc)
            text = output.text()
            note = f"[Timed out after {timeout:g} s: the command and everything it started were killed.]"
            return ToolOutput(content=TextContent(text=f"{text}\n\n{note}" if text else note), is_error=True)
        except asyncio.CancelledError:
            await asyncio.shield(_kill_group(proc))
            output.close()
            raise
        code = proc.returncode if proc.returncode is not None else -1
        exit_code = 128 - code if code < 0 else code  # killed by signal N: 128+N, as shells report
        text = self._noted(output.text(), args, ctx, proxy, denied_before)
        return ToolOutput(content=TextContent(text=text), exit_code=exit_code)

    def _noted(
        self, text: str, args: BashParams, ctx: ToolContext, proxy: HostProxy | None, since: int
    ) -> str:
        """The output, with what the sandbox did to the command (its connections, its writes), when
        it did."""
        sandbox = ctx.sandbox
        if sandbox is None or not self.confined(args, ctx):
            return text
        notes = []
        blocked = sorted(set(proxy.denied[since:])) if proxy is not None else []
        if blocked:
            hosts, allowed = ", ".join(blocked), ", ".join(sandbox.allow_hosts)
            notes.append(f"[Shard's sandbox blocked connections to {hosts}: only {allowed} may be reached.]")
        elif not sandbox.network and proxy is None and _NO_NETWORK.search(text):
            notes.append(NO_NETWORK_NOTE)
        if _READ_ONLY.search(text):
            notes.append(READ_ONLY_NOTE)
        return "\n\n".join([text, *notes])


# What programs print when the network is not there; inside the sandbox that is the sandbox's doing.
_NO_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|"
    r"Name or service not known|getaddrinfo|No address associated with hostname|Connection refused",
    re.IGNORECASE,
)
NO_NETWORK_NOTE = (
    "[Shard's sandbox has no network: connections from inside it fail. If this command needs the "
    "network, run it again with sandbox: false and a reason (the user is asked).]"
)
# What programs print when they write where the sandbox keeps things read-only (or finds the
# placeholder that keeps a missing .git, .shard, … from being made: an empty read-only file).
_READ_ONLY = re.compile(
    r"Read-only file system|Device or resource busy|Not a directory|invalid gitfile format", re.IGNORECASE
)
READ_ONLY_NOTE = (
    "[Shard's sandbox: only the working directory (and [sandbox] writable) can be written, and in it "
    f"{', '.join(ROOT_PLACES)} and shell start-up files stay read-only ({', '.join(sorted(CREATED_NEVER))} "
    "cannot be created either: where missing, an empty read-only file stands in). If this command must "
    "write there (a git commit, a new repository, an agent definition), run it again with sandbox: false "
    "and a reason (the user is asked).]"
)


async def _collect(proc: subprocess.Popen[bytes], output: _Output) -> None:
    assert proc.stdout is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proc.stdout)
    pump = asyncio.ensure_future(_read_all(reader, output))
    try:
        await _wait_exit(proc)
        # The command is done; its background children may keep the pipe open forever.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pump), DRAIN_AFTER_EXIT)
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
        transport.close()
        output.close()


async def _read_all(stream: asyncio.StreamReader, output: _Output) -> None:
    while chunk := await stream.read(65536):
        output.add(chunk)


async def _wait_exit(proc: subprocess.Popen[bytes], limit: float | None = None) -> None:
    """Wait for the command's own exit (not its pipes'), on a worker thread."""
    await asyncio.to_thread(proc.wait, limit)


async def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the whole process group, then SIGKILL what is left of it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        await _wait_exit(proc, KILL_GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # also children that ignored SIGTERM or outlived the shell
    with contextlib.suppress(subprocess.TimeoutExpired):
        await _wait_exit(proc, KILL_GRACE)


class _Output:
    """Keeps the head and tail of the output; spills everything to a file once it is too long."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._spill: Path | None = None
        self._fd: int | None = None

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if len(self.head) < HEAD_BYTES:
            take = HEAD_BYTES - len(self.head)
            self.head += chunk[:take]
            chunk = chunk[take:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > TAIL_BYTES:
                if self._fd is None:
                    self._open_spill()
                if self._fd is not None:
                    os.write(self._fd, bytes(self.tail[: len(self.tail) - TAIL_BYTES]))
                del self.tail[: len(self.tail) - TAIL_BYTES]

    def _open_spill(self) -> None:
        if self._ctx.spill_dir is None:
            return
        private_dirs(self._ctx.spill_dir)
        name = f"{self._ctx.tool_call_id or 'bash'}.log"
        self._spill = self._ctx.spill_dir / name
        self._fd = open_private(self._spill, os.O_WRONLY | os.O_TRUNC)
        os.write(self._fd, bytes(self.head))

    def close(self) -> None:
        if self._fd is not None:
            os.write(self._fd, bytes(self.tail))
            os.close(self._fd)
            self._fd = None

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        if self.total <= HEAD_BYTES + TAIL_BYTES:
            return head + self.tail.decode("utf-8", errors="replace")
        omitted = self.total - len(self.head) - len(self.tail)
        where = (
            f" The full output ({self.total} bytes) is in {self._spill}; read it with the read tool."
            if self._spill
            else ""
        )
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n\n[… {omitted} bytes omitted.{where}]\n\n{tail}"


def _default_signals() -> None:
    """In the child before exec: SIGINT and SIGQUIT back to their defaults. A Shard started in the
    background (or by a parent that ignores them) would otherwise pass the ignore on, and bash
    cannot undo an ignore it inherited — ``kill -INT`` would not stop what the command started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)

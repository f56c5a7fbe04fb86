"""``shard run PROMPT``: a headless one-shot over the same runtime as ``shard agent --stdio``.

Prints the assistant's text as it streams, or with ``--json`` every event as JSONL. In text mode,
stderr tells what one waits for: the model in use, "waiting for the model…", tool calls and their
output, each retry with its cause, and a closing line with tokens, cost and the session id.

Nobody is there to answer a permission request, so the headless policy does (deny by default);
``--allow TOOL``, ``--allow 'bash:COMMAND'`` and ``--yes-to-all`` say up front what this run may do
(``shard.agent.permissions.allowances``).

Exit status: 0 when the turn completed, 1 when it failed, 2 for a usage or config mistake, 130 when
interrupted (Ctrl-C, at any instant), 141 when the reader of stdout went away (``| head -1``: the turn
is aborted quietly, as SIGPIPE ends any member of a pipeline).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import orjson

from shard.agent.boot import StartupError, prepare
from shard.cli.agent import io_error, options
from shard.protocol.errors import ShardError

EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_PIPE = 1, 2, 130, 141
_PREVIEW_LINES = 8


def main_run(args: argparse.Namespace) -> int:
    if args.continue_:
        if args.session is not None:
            print("shard: --continue and --session each choose the session: give one", file=sys.stderr)
            return EXIT_USAGE
        args.session = _latest_session(args)
        if args.session is None:
            return EXIT_USAGE
    try:
        prepared = prepare(options(args))
    except (StartupError, ShardError, OSError) as caught:
        exc = io_error(caught) if isinstance(caught, OSError) else caught
        print(f"shard: {exc.message}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, StartupError) else 3
    _start_sdk_import(prepared)
    try:
        return asyncio.run(_run(prepared, args))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _latest_session(args: argparse.Namespace) -> str | None:
    """``--continue``: the newest session of the working directory (None, said on stderr, when there
    is none)."""
    from shard.agent.config import shard_home
    from shard.agent.session.listing import HEAD_BYTES, sessions_in

    cwd = os.path.realpath(os.path.expanduser(args.cwd or os.getcwd()))
    found = sessions_in(shard_home(args.home), cwd, head_bytes=HEAD_BYTES)
    if not found:
        print(f"shard: no session to continue in {cwd} (shard sessions lists them all)", file=sys.stderr)
        return None
    return found[0]["session_id"]


async def _run(prepared: Any, args: argparse.Namespace) -> int:
    from shard.agent.mcp.host import McpHost
    from shard.agent.permissions.allowances import AllowanceError, Allowances
    from shard.agent.runtime import Runtime
    from shard.protocol.events import EventBase

    loop = asyncio.get_running_loop()
    stopping: set[asyncio.Task[None]] = set()
    why_stopped: list[int] = []

    def stop(code: int) -> None:
        if not why_stopped:
            why_stopped.append(code)
            printer.stopping = True
            stopping.add(loop.create_task(runtime.abort()))

    printer: _Printer = (_JsonPrinter if args.json else _TextPrinter)(lambda: stop(EXIT_PIPE))

    def sink(event: EventBase) -> None:
        printer.show(event)

    # a one-shot run has nobody to ask: the headless policy answers, within the run's allowances
    mcp = McpHost.for_config(prepared.config, prepared.cwd, prepared.options.tools)
    runtime = Runtime.from_prepared(prepared, sink=sink, has_responder=False, mcp=mcp)
    # an MCP tool is known once its server starts: --allow may name one of a configured server's
    mcp_names = [n for n in args.allow or [] if mcp is not None and mcp.may_name(n)]
    try:
        runtime.gate.allowances = Allowances.parse(
            args.allow or [], yes_to_all=args.yes_to_all, tool_names=[*runtime.tools, *mcp_names]
        )
    except AllowanceError as exc:
        print(f"shard: {exc}", file=sys.stderr)
        prepared.store.close()
        return EXIT_USAGE
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, lambda: stop(EXIT_INTERRUPTED))
    _watch_stdout(loop, lambda: stop(EXIT_PIPE))
    printer.start(runtime, prepared)
    sink(runtime.hello())
    sink(runtime.sync())
    runtime.start_background_work()
    await runtime.handle(orjson.dumps({"type": "prompt", "id": "run", "message": args.prompt}))
    await runtime.wait_idle()
    if stopping:
        await asyncio.gather(*stopping)
    if mcp is not None:
        await mcp.close()
    printer.finish(prepared.store.session_id if prepared.store.exists else None)
    prepared.store.close()
    if why_stopped:
        return why_stopped[0]
    return EXIT_FAILED if printer.failed or runtime.failed_turns or runtime.fatal else 0


def _watch_stdout(loop: asyncio.AbstractEventLoop, on_gone: Callable[[], None]) -> None:
    """Learn at once that the reader of a pipe went away (``| head -1`` after its line), not at the
    next write: the write end of a pipe reports an error to the poller when its read end closes."""
    import stat

    fd = sys.stdout.fileno()
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return

    def gone() -> None:
        loop.remove_reader(fd)
        on_gone()

    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        loop.add_reader(fd, gone)


def _start_sdk_import(prepared: Any) -> None:
    """A one-shot run calls its model at once: start importing the SDK (1-3 s) now, on a thread,
    overlapping the runtime's own imports, rather than after them."""
    import importlib
    import threading

    name = {"anthropic": "anthropic", "openai": "openai"}.get(
        prepared.model.provider.kind if prepared.model else ""
    )
    if name is not None:
        threading.Thread(target=importlib.import_module, args=(name,), daemon=True).start()


class _Printer:
    """Writes to stdout and stderr; when the reader of stdout goes away it says so once, through
    ``on_gone``, and writes nothing more — it never raises into the runtime."""

    def __init__(self, on_gone: Callable[[], None]) -> None:
        self.failed = False
        self.gone = False
        self.stopping = False  # the run is being ended (Ctrl-C, the reader left): nothing to wait for
        self._on_gone = on_gone

    def start(self, runtime: Any, prepared: Any) -> None:
        pass

    def show(self, event: Any) -> None:
        raise NotImplementedError

    def finish(self, session_id: str | None) -> None:
        pass

    def out(self, data: bytes) -> None:
        if self.gone:
            return
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            self._lost()
        except OSError as exc:
            if exc.errno not in (32, 104):  # EPIPE, ECONNRESET
                raise
            self._lost()

    def _lost(self) -> None:
        self.gone = True
        # Whatever is still buffered must not fail again at exit: stdout now leads nowhere.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        self._on_gone()


def err(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


class _TextPrinter(_Printer):
    def __init__(self, on_gone: Callable[[], None]) -> None:
        super().__init__(on_gone)
        self._at_line_start = True
        self._waiting = False
        self._usage: Any = None

    def start(self, runtime: Any, prepared: Any) -> None:
        model = prepared.model.id if prepared.model else "no model configured"
        err(f"shard: {model} (mode {runtime.modes.active.name}) in {prepared.cwd}")
        for line in runtime.gate.allowances.describe() if runtime.gate.allowances else []:
            err(f"shard: {line}")

    def show(self, event: Any) -> None:
        kind = event.type
        if kind == "message_delta" and event.kind == "text" and event.text_delta:
            self._waiting = False
            self.out(event.text_delta.encode())
            self._at_line_start = event.text_delta.endswith("\n")
        elif kind in ("turn_start", "tool_result"):
            if kind == "tool_result":
                self._tool_result(event)
            self._wait()
        elif kind == "message_delta":
            self._waiting = False
        elif kind == "status" and event.status == "streaming" and event.detail:
            self._newline()
            err(f"shard: {event.detail}")
        elif kind == "status" and event.status == "compacting":
            err("shard: compacting the conversation…")
        elif kind == "tool_call":
            self._newline()
            args = " ".join(f"{k}={v}" for k, v in event.args.items())
            err(f"» {event.name} {args}".rstrip())
        elif kind == "turn_end":
            self._usage = getattr(event, "usage", None)
        elif kind == "error":
            self._newline()
            err(f"shard: {event.code}: {event.message}")
            self.failed = True
        elif kind == "response" and not event.success:
            self._newline()
            err(f"shard: {event.error.code}: {event.error.message}")
            self.failed = True

    def _wait(self) -> None:
        if not self._waiting and not self.stopping:
            self._waiting = True
            self._newline()
            err("shard: waiting for the model…")

    def _tool_result(self, event: Any) -> None:
        text = getattr(event.content, "message", None) or getattr(event.content, "text", "")
        lines = str(text).splitlines() or [""]
        mark = "✗" if event.is_error else "│"
        for line in lines[:_PREVIEW_LINES]:
            err(f"  {mark} {line}")
        if len(lines) > _PREVIEW_LINES:
            err(f"  {mark} … {len(lines) - _PREVIEW_LINES} more lines")

    def _newline(self) -> None:
        if not self._at_line_start:
            self.out(b"\n")
            self._at_line_start = True

    def finish(self, session_id: str | None) -> None:
        self._newline()
        parts = []
        if self._usage is not None:
            parts.append(f"{self._usage.input:,} tokens in, {self._usage.output:,} out")
            cost = getattr(self._usage, "cost", None)
            if cost is not None:
                parts.append(f"${cost:.4f}")
        if session_id:
            parts.append(f"session {session_id}")
        if parts:
            err(f"[{' · '.join(parts)}]")


class _JsonPrinter(_Printer):
    def show(self, event: Any) -> None:
        if event.type == "error" or (event.type == "response" and not event.success):
            self.failed = True
        self.out(event.to_json() + b"\n")

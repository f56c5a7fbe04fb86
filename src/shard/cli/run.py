"""``shard run PROMPT``: a headless one-shot over the same runtime as ``shard agent --stdio``.

Prints the assistant's text as it streams (tool activity and errors go to stderr), or with ``--json``
every event as JSONL. Exits 0 when the turn completed, 1 when it failed, 130 when interrupted.
Permission asks are answered by the headless policy: nobody is there to answer them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

import orjson

from shard.agent.boot import StartupError, prepare
from shard.cli.agent import options
from shard.protocol.errors import ShardError


def main_run(args: argparse.Namespace) -> int:
    try:
        prepared = prepare(options(args))
    except (StartupError, ShardError) as exc:
        print(f"shard: {exc.message}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, StartupError) else 3
    _start_sdk_import(prepared)
    try:
        return asyncio.run(_run(prepared, args.prompt, as_json=args.json))
    except KeyboardInterrupt:
        return 130


async def _run(prepared, prompt: str, *, as_json: bool) -> int:  # noqa: ANN001
    from shard.agent.runtime import Runtime
    from shard.protocol.events import EventBase

    printer = _JsonPrinter() if as_json else _TextPrinter()

    def sink(event: EventBase) -> None:
        printer.show(event)

    # a one-shot run has nobody to ask: the headless policy answers every request
    runtime = Runtime.from_prepared(prepared, sink=sink, has_responder=False)
    sink(runtime.hello())
    sink(runtime.sync())
    runtime.start_background_work()
    interrupted = False
    loop = asyncio.get_running_loop()
    aborting: set[asyncio.Task[None]] = set()

    def on_signal() -> None:
        nonlocal interrupted
        interrupted = True
        aborting.add(loop.create_task(runtime.abort()))

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal)
    await runtime.handle(orjson.dumps({"type": "prompt", "id": "run", "message": prompt}))
    await runtime.wait_idle()
    printer.finish()
    prepared.store.close()
    if not as_json and prepared.store.exists:
        print(f"[session {prepared.store.session_id}]", file=sys.stderr)
    if interrupted:
        return 130
    return 1 if printer.failed or runtime.failed_turns or runtime.fatal else 0


_PREVIEW_LINES = 8


def _start_sdk_import(prepared) -> None:  # noqa: ANN001
    """A one-shot run calls its model at once: start importing the SDK (1-3 s) now, on a thread,
    overlapping the runtime's own imports, rather than after them."""
    import importlib
    import threading

    name = {"anthropic": "anthropic", "openai": "openai"}.get(
        prepared.model.provider.kind if prepared.model else ""
    )
    if name is not None:
        threading.Thread(target=importlib.import_module, args=(name,), daemon=True).start()


class _TextPrinter:
    def __init__(self) -> None:
        self.failed = False
        self._at_line_start = True

    def show(self, event) -> None:  # noqa: ANN001
        kind = event.type
        if kind == "message_delta" and event.kind == "text" and event.text_delta:
            sys.stdout.write(event.text_delta)
            sys.stdout.flush()
            self._at_line_start = event.text_delta.endswith("\n")
        elif kind == "tool_call":
            self._newline()
            args = " ".join(f"{k}={v}" for k, v in event.args.items())
            print(f"» {event.name} {args}".rstrip(), file=sys.stderr)
        elif kind == "tool_result":
            text = getattr(event.content, "message", None) or getattr(event.content, "text", "")
            lines = str(text).splitlines() or [""]
            mark = "✗" if event.is_error else "│"
            for line in lines[:_PREVIEW_LINES]:
                print(f"  {mark} {line}", file=sys.stderr)
            if len(lines) > _PREVIEW_LINES:
                print(f"  {mark} … {len(lines) - _PREVIEW_LINES} more lines", file=sys.stderr)
        elif kind == "error":
            self._newline()
            print(f"shard: {event.code}: {event.message}", file=sys.stderr)
            self.failed = True
        elif kind == "response" and not event.success:
            self._newline()
            print(f"shard: {event.error.code}: {event.error.message}", file=sys.stderr)
            self.failed = True

    def _newline(self) -> None:
        if not self._at_line_start:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._at_line_start = True

    def finish(self) -> None:
        self._newline()


class _JsonPrinter:
    def __init__(self) -> None:
        self.failed = False

    def show(self, event) -> None:  # noqa: ANN001
        if event.type == "error" or (event.type == "response" and not event.success):
            self.failed = True
        sys.stdout.buffer.write(event.to_json() + b"\n")
        sys.stdout.buffer.flush()

    def finish(self) -> None:
        sys.stdout.flush()

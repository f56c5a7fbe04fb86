"""What ``shard run`` prints, however the run is hosted (in this process or by a running daemon):
the answer's text on stdout and what one waits for on stderr, or with ``--json`` every event as
JSONL. A printer is fed protocol events and never raises into whoever feeds it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from shard.protocol.stops import stop_note
from shard.protocol.words import tokens

_PREVIEW_LINES = 8


def watch_stdout(loop: asyncio.AbstractEventLoop, on_gone: Callable[[], None]) -> None:
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


class Printer:
    """Writes to stdout and stderr; when the reader of stdout goes away it says so once, through
    ``on_gone``, and writes nothing more — it never raises into the runtime."""

    def __init__(self, on_gone: Callable[[], None]) -> None:
        self.failed = False
        self.gone = False
        self.stopping = False  # the run is being ended (Ctrl-C, the reader left): nothing to wait for
        self._on_gone = on_gone

    def start(self, model: str | None, mode: str, cwd: str, allowances: list[str]) -> None:
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


class TextPrinter(Printer):
    def __init__(self, on_gone: Callable[[], None]) -> None:
        super().__init__(on_gone)
        self._at_line_start = True
        self._waiting = False
        self._usage: Any = None

    def start(self, model: str | None, mode: str, cwd: str, allowances: list[str]) -> None:
        err(f"shard: {model or 'no model configured'} (mode {mode}) in {cwd}")
        for line in allowances:
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
        elif kind == "message_complete" and event.message.role == "assistant":
            note = stop_note(event.message.stop_reason)  # a failure's detail: the error line after it
            if note is not None:  # the text above is not the whole reply
                self._newline()
                err(f"shard: reply {note}")
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
            parts.append(f"{tokens(self._usage.input)} tokens in, {tokens(self._usage.output)} out")
            cost = getattr(self._usage, "cost", None)
            if cost is not None:
                parts.append(f"${cost:.4f}")
        if session_id:
            parts.append(f"session {session_id}")
        if parts:
            err(f"[{' · '.join(parts)}]")


class JsonPrinter(Printer):
    def show(self, event: Any) -> None:
        if event.type == "error" or (event.type == "response" and not event.success):
            self.failed = True
        self.out(event.to_json() + b"\n")

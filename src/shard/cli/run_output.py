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

from shard.cli.run_calls import allowance, call_line
from shard.protocol.figures import tokens_in
from shard.protocol.stops import stop_note

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

    def start(
        self, model: str | None, mode: str, cwd: str, allowances: list[str], window: str | None = None
    ) -> None:
        """``window``: the model's context window and where it came from ("8,192 from the server")."""

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


def _get(obj: Any, name: str) -> Any:
    """A field of a pydantic model (a direct run) or of a plain dict (through a daemon)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def err(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


class TextPrinter(Printer):
    """Each tool call is one ``»`` line on stderr — shown when it runs, when a permission is asked
    for it, or when it is refused — then its output, or why it was denied and what ``--allow``
    would let it run (``run_calls``)."""

    def __init__(self, on_gone: Callable[[], None]) -> None:
        super().__init__(on_gone)
        self._at_line_start = True
        self._waiting = False
        self._usage: list[Any] = []  # each turn's
        self._cwd = ""
        self._calls: dict[str, tuple[str, Any]] = {}  # the assistant's calls not finished: id -> name, args
        self._shown: set[str] = set()  # calls whose » line is out
        self._denied: set[str] = set()  # calls whose denial is said (the model's message is not repeated)
        self._asked: dict[str, tuple[str, Any]] = {}  # request id -> call id, the request

    def start(
        self, model: str | None, mode: str, cwd: str, allowances: list[str], window: str | None = None
    ) -> None:
        self._cwd = cwd
        about = f"window {window}; mode {mode}" if window else f"mode {mode}"
        err(f"shard: {model or 'no model configured'} ({about}) in {cwd}")
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
            self._call_line(event.tool_call_id, event.name, event.args)
        elif kind == "message_complete":
            self._remember(event.message)
            note = stop_note(event.message.stop_reason) if event.message.role == "assistant" else None
            if note is not None:  # the text above is not the whole reply (a failure's detail follows)
                self._newline()
                err(f"shard: reply {note}")
        elif kind == "permission_request":
            call_id = next((c for c in self._calls if c not in self._shown), "")
            self._asked[event.request_id] = (call_id, event)
            self._call_line(call_id, event.tool_name, event.input or {})
        elif kind == "permission_resolved" and event.request_id in self._asked:
            self._resolved(event)
        elif kind == "turn_end" and getattr(event, "usage", None) is not None:
            self._usage.append(event.usage)
        elif kind == "queue_changed":
            self._queue_changed(event)
        elif kind == "error":
            self._newline()
            err(f"shard: {event.code}: {event.message}")
            self.failed = True
        elif kind == "response" and not event.success:
            self._newline()
            err(f"shard: {event.error.code}: {event.error.message}")
            self.failed = True

    def _queue_changed(self, event: Any) -> None:
        """Another client queued a message for this run's agent (through the daemon), or a queued
        message was handed back: said on stderr, so nothing reaches the agent unseen."""
        items = event.returned if event.returned else event.queue[-1:] if event.reason == "queued" else []
        for item in items:
            fields = item if isinstance(item, dict) else item.to_wire()
            how = "a steer" if fields.get("behavior") == "steer" else "a follow-up"
            said = " ".join(str(fields.get("message", "")).split())
            self._newline()
            if event.returned:
                err(f"shard: not sent ({event.reason}): {how}: {said}")
            else:
                err(f"shard: {fields.get('source') or 'another client'} queued {how}: {said}")

    def _wait(self) -> None:
        if not self._waiting and not self.stopping:
            self._waiting = True
            self._newline()
            err("shard: waiting for the model…")

    def _remember(self, message: Any) -> None:
        for block in _get(message, "content") or []:
            if _get(block, "type") == "tool_call":
                self._calls[str(_get(block, "id"))] = (str(_get(block, "name")), _get(block, "args") or {})

    def _call_line(self, call_id: str, name: str, args: Any) -> None:
        if call_id in self._shown:
            return
        if call_id:
            self._shown.add(call_id)
        self._newline()
        err(call_line(name, args if isinstance(args, dict) else {}))

    def _resolved(self, event: Any) -> None:
        call_id, request = self._asked.pop(event.request_id)
        if (event.decision or event.choice_id) != "deny":
            return
        self._denied.add(call_id)
        if event.source == "abort":
            err("  not run: the turn was aborted")
            return
        why = {"headless": "nobody can answer here", "timeout": "no answer came in time"}.get(event.source)
        if why is None:
            err(f"  denied by {event.source or 'a client'}")
            return
        outside = any(_get(d, "label") == "outside the working directory" for d in request.details or [])
        how = allowance(request.tool_name, request.input or {}, outside=outside, cwd=self._cwd)
        err(f"  denied: {why}; to allow it: {how}")

    def _tool_result(self, event: Any) -> None:
        call_id = str(event.tool_call_id)
        if call_id in self._calls:  # a call refused before it ran (plan mode, bad arguments) has no line yet
            self._call_line(call_id, *self._calls.pop(call_id))
        if call_id in self._denied:
            return  # said above, in words for a person rather than for the model
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
        if self._usage:  # every input token, those read from the provider's cache included
            tokens = sum(tokens_in(u) for u in self._usage)
            parts.append(f"{tokens:,} tokens in, {sum(_get(u, 'output') or 0 for u in self._usage):,} out")
            costs = [c for u in self._usage if (c := _get(u, "cost")) is not None]
            if costs:
                parts.append(f"${sum(costs):.4f}")
        if session_id:
            parts.append(f"session {session_id}")
        if parts:
            err(f"[{' · '.join(parts)}]")


class JsonPrinter(Printer):
    def show(self, event: Any) -> None:
        if event.type == "error" or (event.type == "response" and not event.success):
            self.failed = True
        self.out(event.to_json() + b"\n")

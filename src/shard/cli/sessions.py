"""``shard sessions``: list, show and remove the sessions under ``$SHARD_HOME/sessions``.

* ``shard sessions [--cwd DIR | --here] [--json]`` — every session (forks included, marked), newest
  first, from each session's ``meta.json`` (``session/listing.py``), never whole transcripts.
* ``shard sessions show ID [--json]`` — the conversation as text (``--json``: the raw entries, one
  JSON object a line, as stored).
* ``shard sessions rm ID [--forks]`` — remove the session's folder, refused while a process has the
  session open or a daemon agent is bound to it (``session/removal.py``).

Every mistake is one line on stderr and exit status 1 (2 for command-line usage); nothing here reads
a session for writing.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shard._home import HomeError, prepare_home
from shard.agent.config.settings import shard_home
from shard.agent.session.listing import HEAD_BYTES, all_sessions, sessions_in
from shard.agent.session.removal import lock_for_removal
from shard.agent.session.store import find_session, load_entries
from shard.agent.session.window import stop_reason_of
from shard.daemon.registry import bound_agent
from shard.protocol.errors import ShardError
from shard.protocol.stops import stop_note

EXIT_FAILED = 1
_RESULT_LINES = 6
_TEXT_CUT = 200


def main_sessions(args: argparse.Namespace) -> int:
    home = shard_home(args.home)
    try:
        notice = prepare_home(home)
    except HomeError as exc:
        return _fail(exc.message)
    if notice is not None:
        print(f"shard: {notice}", file=sys.stderr)
    try:
        if args.action == "show":
            return _show(home, args.session_id, as_json=args.json)
        if args.action == "rm":
            return _remove(home, args.session_id, with_forks=args.forks)
        return _list(home, args)
    except ShardError as exc:
        return _fail(exc.message)
    except BrokenPipeError:  # `shard sessions | head`: the reader has what it wanted
        _quiet_stdout()
        return 0


def _fail(message: str) -> int:
    print(f"shard: {message}", file=sys.stderr)
    return EXIT_FAILED


def _quiet_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


# --- list ---------------------------------------------------------------------------------------


def _list(home: Path, args: argparse.Namespace) -> int:
    where = os.getcwd() if args.here else args.cwd
    if where is None:
        sessions = all_sessions(home, head_bytes=HEAD_BYTES)
    else:
        sessions = sessions_in(home, os.path.expanduser(where), head_bytes=HEAD_BYTES)
    if args.json:
        sys.stdout.write("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions))
        sys.stdout.flush()
        return 0
    if not sessions:
        place = f"for {where}" if where is not None else f"in {home / 'sessions'}"
        print(f"shard: no sessions {place}", file=sys.stderr)
        return 0
    sys.stdout.write("".join(line + "\n" for line in table(sessions)))
    sys.stdout.flush()
    return 0


def table(sessions: list[dict[str, Any]]) -> list[str]:
    """The aligned listing: id, last update, message count, working directory, title (a fork's
    title says what it was forked from)."""
    rows = [("SESSION", "UPDATED", "MSGS", "CWD", "TITLE")]
    for s in sessions:
        count = s.get("message_count")
        title = s.get("title") or ""
        if s.get("source_session_id"):
            title = f"(fork of {s['source_session_id']}) {title}".rstrip()
        rows.append(
            (
                s["session_id"],
                _when(s["updated"]),
                "?" if count is None else str(count),
                _short_path(s.get("cwd") or "?"),
                title,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    out = []
    for r in rows:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].rjust(widths[2]), r[3].ljust(widths[3])]
        out.append("  ".join([*cells, r[4]]).rstrip())
    return out


def _when(ts: Any, form: str = "%Y-%m-%d %H:%M") -> str:
    try:
        return time.strftime(form, time.localtime(ts))
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"


def _short_path(path: str) -> str:
    user = os.path.expanduser("~")
    if user != "/" and (path == user or path.startswith(user + "/")):
        return "~" + path[len(user) :]
    return path


# --- show ---------------------------------------------------------------------------------------


def _show(home: Path, session_id: str, *, as_json: bool) -> int:
    entries = load_entries(find_session(home, session_id))  # only read: a live session is not touched
    if as_json:
        sys.stdout.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    else:
        sys.stdout.write("".join(line + "\n" for line in transcript(entries)))
    sys.stdout.flush()
    return 0


def transcript(entries: list[dict[str, Any]]) -> Iterator[str]:
    """A session read as a conversation: who said what, tool calls with the start of their results,
    compaction summaries, and changes of mode, model and permissions."""
    header = entries[0]
    messages = sum(1 for e in entries if e["kind"] in ("message", "tool_result"))
    title = f"session {header.get('session_id')}"
    if header.get("sourceSessionId"):
        title += f" (fork of {header['sourceSessionId']} at {header.get('sourceEntryId')})"
    yield title
    yield f"cwd      {header.get('cwd')}"
    yield f"model    {header.get('model') or 'none'} · mode {header.get('mode')}"
    yield f"created  {_when(header['ts'])} · {messages} message{'' if messages == 1 else 's'}"
    for loaded in header.get("context_files") or []:
        cut = ", truncated" if loaded.get("truncated") else ""
        yield f"instructions  {loaded.get('path')} ({loaded.get('bytes')} bytes{cut})"
    for entry in entries[1:]:
        yield from _entry(entry)


def _entry(entry: dict[str, Any]) -> Iterator[str]:
    kind = entry["kind"]
    if kind == "message":
        message = _object(entry.get("message"))
        role = message.get("role")
        who = "you" if role == "user" else "assistant"
        if role == "assistant" and entry.get("model"):
            who += f" ({entry['model']})"
        yield ""
        yield f"▍{who} · {_when(entry['ts'], '%H:%M')}"
        for block in _array(message.get("content")):
            yield from _block(_object(block))
        note = stop_note(stop_reason_of(entry), message.get("stop_detail"))
        if note is not None and role == "assistant":
            yield f"({note})"
    elif kind == "tool_result":
        yield from _result(entry)
    elif kind == "compaction":
        before, after = entry.get("tokens_before"), entry.get("tokens_after")
        counted = all(isinstance(n, int) and not isinstance(n, bool) for n in (before, after))
        tokens = f" · {before:,} → {after:,} tokens" if counted else ""
        yield ""
        yield f"── compaction {entry.get('index')}{tokens} ──"
        yield from str(entry.get("summary", "")).splitlines()
        yield "──"
    elif kind == "mode_change":
        yield f"· mode {entry.get('previous')} → {entry.get('mode')}"
    elif kind == "model_change":
        level = f" (reasoning {entry['reasoning']})" if entry.get("reasoning") else ""
        yield f"· model → {entry.get('model')}{level}"
    elif kind == "reasoning_change":
        yield f"· reasoning {entry.get('previous')} → {entry.get('reasoning')}"
    elif kind == "grant":
        yield f"· always allowed: {_rule(entry.get('rule'))}"
    elif kind == "queue_returned":  # queued messages handed back, never delivered
        for item in _array(entry.get("messages")):
            queued = _object(item)
            how = "steer" if queued.get("behavior") == "steer" else "follow-up"
            said = _cut(" ".join(str(queued.get("message", "")).split()))
            yield f"· queued {how} not sent ({entry.get('reason')}): {said}"


def _block(block: dict[str, Any]) -> Iterator[str]:
    kind = block.get("type")
    if kind == "text":
        yield from str(block.get("text", "")).rstrip("\n").split("\n")
    elif kind == "thinking":
        yield f"(thinking: {_cut(' '.join(str(block.get('text', '')).split()))})"
    elif kind == "tool_call":
        args = _object(block.get("args"))
        shown = " ".join(f"{k}={_cut(v if isinstance(v, str) else json.dumps(v))}" for k, v in args.items())
        yield f"» {block.get('name')} {shown}".rstrip()
    elif kind == "image":
        size = len(str(block.get("data", ""))) * 3 // 4
        yield f"[image {block.get('mime_type')}, {size:,} bytes]"


def _result(entry: dict[str, Any]) -> Iterator[str]:
    content = _object(entry.get("content"))
    if content.get("kind") == "error":
        text = str(content.get("message", ""))
    elif content.get("kind") == "json":
        text = json.dumps(content.get("value"), ensure_ascii=False)
    else:
        text = str(content.get("text", ""))
    mark = "✗" if entry.get("is_error") else "│"
    lines = text.splitlines() or [""]
    for line in lines[:_RESULT_LINES]:
        yield f"  {mark} {_cut(line)}".rstrip()
    if len(lines) > _RESULT_LINES:
        yield f"  {mark} … {len(lines) - _RESULT_LINES} more lines"
    if entry.get("exit_code"):
        yield f"  {mark} [exit code {entry['exit_code']}]"


def _rule(rule: Any) -> str:
    if not isinstance(rule, dict):
        return "?"
    if rule.get("kind") == "exact":
        return f"{rule.get('tool')} {_cut(str(rule.get('input')))}"
    if rule.get("kind") == "bash_signature":
        commands = [
            " ".join([str(s.get("executable")), *map(str, _array(s.get("flags")))])
            for s in map(_object, _array(rule.get("signatures")))
        ]
        return "commands like " + ", ".join(commands)
    return _cut(json.dumps(rule))


def _object(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one: a session file is data, not a promise."""
    return value if isinstance(value, dict) else {}


def _array(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _cut(text: str) -> str:
    return text if len(text) <= _TEXT_CUT else text[: _TEXT_CUT - 1] + "…"


# --- rm -----------------------------------------------------------------------------------------


def _remove(home: Path, session_id: str, *, with_forks: bool) -> int:
    with lock_for_removal(home, session_id, with_forks=with_forks) as removal:
        # checked while the sessions are locked: no runtime can open them until they are gone
        for sid in removal.session_ids:
            refusal = _bound(home, sid)
            if refusal is not None:
                return _fail(refusal)
        removal.remove()
    forks = removal.session_ids[1:]
    also = f" and its fork{'s' if len(forks) > 1 else ''} {', '.join(forks)}" if forks else ""
    print(f"shard: removed session {session_id}{also}", file=sys.stderr)
    return 0


def _bound(home: Path, session_id: str) -> str | None:
    """Why the daemon's registry keeps ``session_id`` (None: it does not)."""
    registry = home / "state.db"
    try:
        agent = bound_agent(registry, session_id)
    except sqlite3.Error as exc:
        return f"cannot read the daemon's registry {registry} ({exc}); nothing removed"
    if agent is None:
        return None
    name = f" ({agent.name})" if agent.name else ""
    return (
        f"session {session_id} is bound to daemon agent {agent.agent_id}{name}; nothing removed "
        f"(agent.terminate of {agent.agent_id} on the daemon forgets it if its runtime never started "
        "or failed; an agent that ran keeps its session)"
    )

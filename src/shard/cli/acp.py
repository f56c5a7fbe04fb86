"""``shard acp``: an editor (Zed, JetBrains, any ACP client) launches it and speaks ACP on its
stdin/stdout; stdout carries the protocol only, logs go to stderr. The end of input (the editor
closed) and Ctrl-C end it quietly — Ctrl-C with 130 however it was started: one started with SIGINT
ignored (a background job of a script, or of a test run) takes it too, as ``shard run``, ``shard
agent`` and ``shard daemon`` do."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import stat
import sys

from shard._version import __version__
from shard.cli import quit_on_ctrl_c


def main_acp(args: argparse.Namespace) -> int:
    if args.cwd is not None and not os.path.isdir(args.cwd):
        print(f"shard acp: --cwd {args.cwd!r} is not a directory", file=sys.stderr)
        return 2
    if not all(_streamable(fd) for fd in (0, 1)):
        print(
            "shard acp: stdin and stdout must be pipes: an editor (an ACP client) starts it", file=sys.stderr
        )
        return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    from shard.acp import serve

    signal.signal(signal.SIGINT, quit_on_ctrl_c)  # quiet 130, the removals of ``shard._leaving`` done
    cwd = os.path.abspath(args.cwd) if args.cwd is not None else None
    try:
        asyncio.run(serve(args.home, cwd=cwd, direct=args.direct, version=__version__))
    except KeyboardInterrupt:
        return 130
    except (BrokenPipeError, ConnectionError) as exc:  # the editor went away mid-write
        print(f"shard acp: the editor closed the connection ({exc})", file=sys.stderr)
        return 1
    return 0


def _streamable(fd: int) -> bool:
    """A pipe, socket or terminal: what asyncio can read and write without blocking the loop."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class _OneLine(logging.Formatter):
    """A log record as one line: the SDK logs bad input with its traceback, we say what it was."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"shard acp: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {exc}"
        return text.replace("\n", " ")

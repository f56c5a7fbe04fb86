"""The ``shard`` command (DESIGN §5): parse the line (``cli/parser.py``), run its command. Kept
import-light: each subcommand imports what it needs when it runs, so ``shard agent --stdio`` reaches
``hello`` before any heavy module loads."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING

from shard import _dataclass_code, _regex_code, _schema_code

# Before the first pattern is compiled and the first dataclass made (dataclasses' own, protocol
# framing's, below): every command's run from kept code.
_regex_code.install()
_dataclass_code.install()
_schema_code.install()

from shard._leaving import leave  # noqa: E402
from shard._trace import mark  # noqa: E402
from shard.cli.parser import COMMANDS, build_parser  # noqa: E402

if TYPE_CHECKING:
    from sys import UnraisableHookArgs


_kept: list[argparse.ArgumentParser] = []


def keep_parser() -> None:
    """Build the parser now, for every later :func:`main` of this process and of its forks: the warm
    template builds it once (~6 ms with argparse's message lookups) for every runtime it forks."""
    _kept[:] = [build_parser()]


def main(argv: list[str] | None = None) -> int:
    mark("main")
    if argv is None:
        argv = sys.argv[1:]
    named = argv[0] if argv and argv[0] in COMMANDS else None
    args = (_kept[0] if _kept else build_parser(named)).parse_args(argv)
    if args.command == "agent":
        from shard.cli.agent import main_agent

        return main_agent(args)
    if args.command == "run":
        from shard.cli.run import main_run

        return main_run(args)
    if args.command == "daemon":
        from shard.cli.daemon import main_daemon

        return main_daemon(args)
    if args.command == "web":
        from shard.cli.web import main_web

        return main_web(args)
    if args.command == "sessions":
        from shard.cli.sessions import main_sessions

        return main_sessions(args)
    if args.command == "acp":
        from shard.cli.acp import main_acp

        return main_acp(args)
    if args.command == "mcp":
        from shard.cli.mcp import main_mcp

        return main_mcp(args)
    if args.command == "hosts":
        from shard.cli.hosts import main_hosts

        return main_hosts(args)
    if args.command == "attach":
        from shard.cli.attach import main_attach

        return main_attach(args)
    if args.command == "schema":
        import orjson

        from shard.protocol.schema import protocol_schema

        sys.stdout.buffer.write(orjson.dumps(protocol_schema(), option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if sys.stdin.isatty() and sys.stdout.isatty():  # `shard` alone, in a terminal: the terminal client
        from shard.cli.attach import main_here

        return main_here()
    build_parser().print_help()
    return 2


def entry() -> None:
    """The process entry point (console script and ``python -m shard``).

    Leaves with ``os._exit`` once the command has finished and flushed: tearing down the interpreter
    after a provider SDK was loaded costs ~0.5 s here and does nothing useful — sessions are written
    with unbuffered writes and fsynced at turn end. ``main()`` itself returns normally, for callers
    that run it in-process.
    """
    sys.unraisablehook = _unraisable
    try:
        code = main()
    except KeyboardInterrupt:  # Ctrl-C between the loop's own handlers: the same quiet 130
        code = 130
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that left is not our error
            stream.flush()
    leave()  # what atexit would have removed (``shard._leaving``)
    os._exit(code)


def _unraisable(unraisable: UnraisableHookArgs) -> None:
    """Once asyncio has closed its loop, SIGINT raises KeyboardInterrupt again; one that lands in a
    callback CPython cannot raise from (an import lock's weakref callback, a finalizer) was printed as
    "Exception ignored …" with a traceback, and the Ctrl-C was lost: the command went on. It is the
    Ctrl-C it was: the same quiet 130."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        leave()
        os._exit(130)
    sys.__unraisablehook__(unraisable)

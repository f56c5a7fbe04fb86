"""``shard agent --stdio``: phase A here (hello first), then the stdio runtime."""

from __future__ import annotations

import argparse
import sys

from shard._trace import mark
from shard.agent.boot import AgentOptions, StartupError, error_line, hello_line, prepare, sync_line, write_all
from shard.protocol.errors import ErrorCode, ShardError

EXIT_SESSION = 3


def options(args: argparse.Namespace) -> AgentOptions:
    return AgentOptions(
        home=args.home,
        cwd=args.cwd,
        session=args.session,
        model=args.model,
        mode=args.mode,
        headless_policy=args.headless_policy,
        create=args.create,
        tools=tuple(t for t in args.tools.split(",") if t) if args.tools is not None else None,
        sandbox=args.sandbox,
        agent_id=getattr(args, "agent_id", None),  # only shard agent has the daemon's flags
        system_prompt_file=getattr(args, "system_prompt_file", None),
        delegated=getattr(args, "delegated", False),
        handoff=getattr(args, "handoff", False),
    )


def main_agent(args: argparse.Namespace) -> int:
    try:
        prepared = prepare(options(args))
    except StartupError as exc:
        print(f"shard: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except (ShardError, OSError) as caught:
        exc = caught if isinstance(caught, ShardError) else io_error(caught)
        # The session cannot be opened: say hello so the client can read the reason, then stop.
        write_all(1, hello_line(None) + error_line(exc, fatal=True))
        print(f"shard: {exc.message}", file=sys.stderr)
        return EXIT_SESSION
    write_all(1, hello_line(prepared.model, prepared.config) + sync_line(prepared))
    mark("agent: sync")

    from shard.agent.stdio import run

    return run(prepared)


def io_error(exc: OSError) -> ShardError:
    """A file Shard needs could not be read or written (a full disk, a lost mount): INTERNAL_ERROR."""
    where = f" ({exc.filename})" if exc.filename else ""
    return ShardError(ErrorCode.INTERNAL_ERROR, f"cannot start: {exc.strerror or exc}{where}")

"""``shard daemon``: prepare SHARD_HOME, read the daemon's settings, then serve until shut down."""

from __future__ import annotations

import argparse
import asyncio
import sys

from shard import _secrets
from shard._home import HomeError, prepare_home
from shard.agent.catalog import BUILTIN_KEY_VARIABLES, key_variables
from shard.agent.config import ConfigError, load_config, shard_home


def main_daemon(args: argparse.Namespace) -> int:
    from shard.daemon.limits import DEFAULT_MAX_RUNTIMES
    from shard.daemon.server import StartError, run

    _secrets.capture(BUILTIN_KEY_VARIABLES)
    home = shard_home(args.home)
    try:
        notice = prepare_home(home)
        config = load_config(home)  # refused here, once, rather than by every runtime it would start
    except (HomeError, ConfigError) as exc:
        print(f"shard daemon: {exc.message}", file=sys.stderr)
        return 1
    # The daemon takes the keys its runtimes will need now; they reach them through a pipe.
    _secrets.capture(key_variables(config))
    if notice is not None:
        print(f"shard daemon: {notice}", file=sys.stderr)
    try:
        return asyncio.run(
            run(
                home,
                port=args.port,
                idle_timeout=args.idle_runtime_timeout,
                ping_interval=args.ws_ping_interval,
                outbound_cap=args.outbound_cap,
                max_runtimes=args.max_runtimes or config.max_runtimes or DEFAULT_MAX_RUNTIMES,
                max_input=args.max_input_bytes or config.max_input_bytes,
            )
        )
    except StartError as exc:
        print(f"shard daemon: {exc}", file=sys.stderr)
        return 1

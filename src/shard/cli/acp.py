"""``shard acp``: an editor (Zed, JetBrains, any ACP client) launches it and speaks ACP on its
stdin/stdout; stdout carries the protocol only, logs go to stderr. The end of input (the editor
closed) and Ctrl-C end it quietly."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from shard._version import __version__


def main_acp(args: argparse.Namespace) -> int:
    if args.cwd is not None and not os.path.isdir(args.cwd):
        print(f"shard acp: --cwd {args.cwd!r} is not a directory", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    from shard.acp import serve

    cwd = os.path.abspath(args.cwd) if args.cwd is not None else None
    try:
        asyncio.run(serve(args.home, cwd=cwd, direct=args.direct, version=__version__))
    except KeyboardInterrupt:
        return 130
    except (BrokenPipeError, ConnectionError) as exc:  # the editor went away mid-write
        print(f"shard acp: the editor closed the connection ({exc})", file=sys.stderr)
        return 1
    return 0

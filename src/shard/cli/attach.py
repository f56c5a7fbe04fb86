"""``shard attach [AGENT]``: the terminal client (shard.tui) on the daemon's unix socket; and
``shard`` alone in a terminal: the same client, on the current folder's agent.

Connects first, so a missing daemon or a protocol major this client does not speak is one line on
stderr and exit status 1, before the screen is taken over. Textual loads only here.

``shard`` alone starts a daemon when none serves SHARD_HOME (``autostart``), then opens the agent
of the current folder — the newest top-level agent whose working directory it is, else a new one
made there — as ``claude`` or ``codex`` open a conversation where they are started."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path

from shard.client import CommandError, ConnectError, ProtocolVersionError, ShardClient, ShardClientError
from shard.client.connectors import shard_home
from shard.tui.view import terminal_name  # the pure fold: no Textual


def main_attach(args: argparse.Namespace) -> int:
    home = shard_home(args.home)
    try:
        return asyncio.run(_attach(home, args.agent))
    except KeyboardInterrupt:  # Ctrl-C before the screen was ours (afterwards it is a key)
        return 130


def main_here() -> int:
    """``shard`` alone in a terminal."""
    from shard.cli.autostart import AutostartError, ensure_daemon

    home = shard_home()
    try:
        notice = ensure_daemon(home)
    except AutostartError as exc:
        print(f"shard: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    if notice is not None:
        print(notice, file=sys.stderr)
    try:
        return asyncio.run(_attach(home, None, here=os.path.realpath(os.getcwd())))
    except KeyboardInterrupt:
        return 130


async def _attach(home: Path, agent_id: str | None, *, here: str | None = None) -> int:
    logging.getLogger("shard.client").setLevel(logging.CRITICAL)  # the screen says it, not stderr
    try:
        # who answers from here, as the other clients say it ("Allowed by terminal (pid 4242)")
        client = await ShardClient.connect_unix(home=home, name=terminal_name(os.getpid()))
    except ProtocolVersionError as exc:
        print(f"shard attach: {exc}", file=sys.stderr)
        return 1
    except (ConnectError, OSError):
        print(f"shard attach: no daemon is running for {home} (start one: shard daemon)", file=sys.stderr)
        return 1
    try:
        if here is not None:
            agent_id = await _agent_here(client, here)
        elif agent_id is not None:
            known = {info.agent_id for info in await client.list_agents()}
            if agent_id not in known:
                print(f"shard attach: no agent {agent_id} (shard attach lists them)", file=sys.stderr)
                return 1
        from shard.tui.app import ShardApp

        await ShardApp(client, agent_id=agent_id, cwd=here).run_async()
        return 0
    except (CommandError, ShardClientError) as exc:
        print(f"shard attach: {exc}", file=sys.stderr)
        return 1
    finally:
        with contextlib.suppress(ShardClientError, OSError):
            await client.close()


async def _agent_here(client: ShardClient, cwd: str) -> str:
    """The folder's agent: the newest top-level one working in ``cwd``, else a new one there."""
    here = [a for a in await client.list_agents() if a.cwd == cwd and a.parent_agent_id is None]
    if here:
        return max(here, key=lambda a: a.created_at).agent_id
    return await client.create_agent_id(cwd)

"""Run the ACP agent on this process's stdin/stdout until the editor closes them."""

from __future__ import annotations

from typing import cast

import acp

from shard.acp.backends import choose
from shard.acp.server import ShardAcpAgent


async def serve(home: str | None, *, cwd: str | None = None, direct: bool = False, version: str) -> None:
    backend = await choose(home, direct=direct)
    agent = ShardAcpAgent(backend, version=version, cwd=cwd)
    try:
        # cast: the SDK's Agent protocol lists every method of ACP; it routes only those an agent has
        await acp.run_agent(cast(acp.Agent, agent))  # returns at end of input
    finally:
        await agent.close()

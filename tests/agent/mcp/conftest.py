"""Fixtures for the MCP tests: the demo server served over streamable HTTP by a real local process."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import pytest

from agent.mcp._servers import DEMO


@pytest.fixture
async def http_url() -> AsyncIterator[str]:
    """The demo server on streamable HTTP, in its own process; its URL."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(DEMO), "--http", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    assert proc.stdout is not None
    try:
        port = int(await asyncio.wait_for(proc.stdout.readline(), 30))
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        await proc.wait()

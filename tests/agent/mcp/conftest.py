"""Fixtures for the MCP tests: the demo server (``demo_server.py``, written with the same SDK) as a
stdio command, or served over streamable HTTP by a real local process."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shard.agent.mcp.config import McpServerConfig

DEMO = Path(__file__).with_name("demo_server.py")


def demo(name: str = "demo", *flags: str, **keys: Any) -> McpServerConfig:
    """The demo server as a stdio server config."""
    return McpServerConfig(name=name, command=sys.executable, args=(str(DEMO), *flags), **keys)


def server_toml(name: str = "demo", *flags: str, **keys: Any) -> str:
    """A ``[[mcp_servers]]`` table running the demo server (stdio), or ``url=…`` when given."""
    lines = ["", "[[mcp_servers]]", f"name = {json.dumps(name)}"]
    if "url" not in keys:
        lines += [f"command = {json.dumps(sys.executable)}", f"args = {json.dumps([str(DEMO), *flags])}"]
    for key, value in keys.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


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

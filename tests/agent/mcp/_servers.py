"""Helpers for the MCP tests: the demo server (``demo_server.py``: plain stdio, or with ``--sdk`` the
one written with the same SDK) as a config, as a ``[[mcp_servers]]`` table, and whether the
processes it started are still there."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

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
    """Running (a zombie nobody reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


async def gone(pids: list[int], within: float) -> bool:
    """Whether every process of ``pids`` is gone within ``within`` seconds (a killed process takes a
    moment to die; nothing announces it to a process that is not its parent, so this looks)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while any(alive(pid) for pid in pids):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def pids(path: Path) -> list[int]:
    """The pids the demo servers wrote to ``$DEMO_PIDS``."""
    return [int(line) for line in path.read_text().split()] if path.exists() else []

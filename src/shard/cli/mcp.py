"""``shard mcp list [--home H] [--json]``: the MCP servers of config.toml and their tools.

Each server is started briefly (all at once, each within its ``start_timeout``, in the current
directory, with the environment a runtime would give it), asked for its tools, and stopped. A server
that does not start is one line saying why. Exit status: 0 when every server started (or none is
configured), 1 when any did not, 2 for a mistake in config.toml or on the command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from shard.agent.config.settings import ConfigError, load_config, shard_home
from shard.agent.mcp.config import McpServerConfig
from shard.agent.mcp.names import assign
from shard.agent.tools.registry import builtin_tools

EXIT_FAILED = 1
EXIT_USAGE = 2


def main_mcp(args: argparse.Namespace) -> int:
    home = shard_home(args.home)
    try:
        config = load_config(home)
    except ConfigError as exc:
        print(f"shard: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    if not config.mcp_servers:
        if not args.json:
            print(f"no MCP servers: add [[mcp_servers]] to {home / 'config.toml'} (see docs/mcp.md)")
        return 0
    reports = asyncio.run(_probe_all(config.mcp_servers, Path.cwd()))
    for report in reports:
        print(json.dumps(report) if args.json else _text(report))
    return 0 if all(r["started"] for r in reports) else EXIT_FAILED


async def _probe_all(servers: tuple[McpServerConfig, ...], cwd: Path) -> list[dict[str, Any]]:
    found = await asyncio.gather(*(_probe(s, cwd) for s in servers))
    taken = {tool.name for tool in builtin_tools()}
    reports = []
    for server, (tools, error) in zip(servers, found, strict=True):
        by_remote = {t["tool"]: t for t in tools}
        named, refused = assign(server.name, list(by_remote), taken)
        taken |= set(named)
        listed = [
            {
                **by_remote[remote],
                "name": name,
                "read_only": by_remote[remote]["read_only"] and server.trust_read_only,
            }
            for name, remote in named.items()
        ]
        reports.append(
            {
                "name": server.name,
                "transport": server.transport,
                "target": server.target(),
                "started": error is None,
                "error": error,
                "tools": listed,
                "left_out": refused,
            }
        )
    return reports


async def _probe(server: McpServerConfig, cwd: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The server's tools, or why it did not start."""
    import os

    from shard.agent.mcp.connection import Connection, McpFailure

    connection = Connection(server, cwd, os.environ)
    try:
        tools = await connection.start()
    except McpFailure as exc:
        return [], str(exc)
    finally:
        await connection.close()
    return [
        {"tool": t.name, "read_only": t.read_only, "description": _first_line(t.description)} for t in tools
    ], None


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def _text(report: dict[str, Any]) -> str:
    lines = [f"{report['name']}  {report['transport']}  {report['target']}"]
    if not report["started"]:
        lines.append(f"  failed: {report['error']}")
    elif not report["tools"]:
        lines.append("  (no tools)")
    width = max((len(t["name"]) for t in report["tools"]), default=0)
    for tool in report["tools"]:
        mark = "(read-only) " if tool["read_only"] else ""
        lines.append(f"  {tool['name']:<{width}}  {mark}{tool['description']}".rstrip())
    lines += [f"  {line}" for line in report["left_out"]]
    return "\n".join(lines)

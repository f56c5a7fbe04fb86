"""How a server's tool is named to the model: ``server__tool``, in the charset every provider accepts
(``[A-Za-z0-9_-]``, at most 64 characters). Pure, so a name is the same in every run and a stored
grant (which names the tool) keeps matching.

A character outside the charset becomes ``_``; a name that would be too long keeps its first part
and ends with a short hash of the whole, so two long names that share a beginning stay apart.
"""

from __future__ import annotations

import hashlib
import re

MAX_LENGTH = 64
SEPARATOR = "__"
_ILLEGAL = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The model's name for ``tool`` of ``server`` (a server name is already legal: config.py)."""
    name = f"{server}{SEPARATOR}{_ILLEGAL.sub('_', tool) or '_'}"
    if len(name) <= MAX_LENGTH:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_LENGTH - len(digest) - 1]}_{digest}"


def assign(server: str, tools: list[str], taken: set[str]) -> tuple[dict[str, str], list[str]]:
    """Names for a server's tools (model name → the server's name), and one line for each tool left
    out because its name is already ``taken`` (by another tool, or another of this server's)."""
    named: dict[str, str] = {}
    refused: list[str] = []
    for tool in tools:
        name = tool_name(server, tool)
        if name in taken or name in named:
            refused.append(f"MCP tool {tool!r} of server {server!r} is left out: the name {name} is taken")
            continue
        named[name] = tool
    return named, refused

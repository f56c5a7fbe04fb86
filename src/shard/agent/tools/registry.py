"""The set of tools a runtime offers: the built-ins, plus extension tools named in config.toml
(``[tools] extensions = ["package.module:attribute"]``, an attribute that is a Tool subclass or
instance) — the way a project adds its own tools without patching Shard."""

from __future__ import annotations

import importlib
from pathlib import Path

from shard.agent.tools.base import Tool
from shard.agent.tools.bash import BashTool
from shard.agent.tools.edit import EditTool
from shard.agent.tools.find import FindTool
from shard.agent.tools.grep import GrepTool
from shard.agent.tools.ls import LsTool
from shard.agent.tools.read import ReadTool
from shard.agent.tools.write import WriteTool
from shard.protocol.errors import ErrorCode, ShardError


def builtin_tools() -> list[Tool]:
    return [ReadTool(), WriteTool(), EditTool(), BashTool(), GrepTool(), FindTool(), LsTool()]


def load_extension(spec: str) -> Tool:
    module_name, _, attr = spec.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ShardError(ErrorCode.INVALID_REQUEST, f"tool extension {spec!r}: {exc}") from None
    tool = obj() if isinstance(obj, type) else obj
    if not isinstance(tool, Tool):
        raise ShardError(ErrorCode.INVALID_REQUEST, f"tool extension {spec!r} is not a Tool")
    return tool


def build_tools(
    extensions: tuple[str, ...] = (), allow: list[str] | None = None, hosted: list[Tool] | None = None
) -> dict[str, Tool]:
    """Name → tool. ``hosted``: the subagent tools of a daemon-hosted runtime
    (:func:`~shard.agent.tools.subagents.hosted_tools`). ``allow`` (an allow-list of names) narrows
    the set when given."""
    tools = builtin_tools() + [load_extension(s) for s in extensions] + (hosted or [])
    by_name: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in by_name:
            raise ShardError(ErrorCode.INVALID_REQUEST, f"two tools are named {tool.name!r}")
        by_name[tool.name] = tool
    if allow is not None:
        by_name = {n: t for n, t in by_name.items() if n in allow}
    return by_name


def subagent_tools_for(agent_id: str | None, cwd: Path, home: Path) -> list[Tool]:
    """The subagent tools of a daemon-hosted runtime (``agent_id`` given); a direct one does not
    even import their module (seven parameter models and the daemon link)."""
    if not agent_id:
        return []
    from shard.agent.tools.subagents import hosted_tools

    return hosted_tools(agent_id, cwd, home)

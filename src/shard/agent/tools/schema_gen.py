"""Writes ``schemas.json`` (see :mod:`schema_cache`): ``python -m shard.agent.tools.schema_gen``."""

from __future__ import annotations

import importlib
import sys

import orjson
from pydantic import BaseModel

from shard.agent.tools.base import ToolParams
from shard.agent.tools.schema_cache import CACHE, fresh, key

# The modules defining the parameter models the cache covers (every tool module Shard ships).
TOOL_MODULES = ("registry", "recall", "subagents")


def shipped_params() -> list[type[BaseModel]]:
    """Every tool parameter model defined in ``shard.agent.tools`` (importing its tool modules)."""
    for name in TOOL_MODULES:
        importlib.import_module(f"shard.agent.tools.{name}")
    found: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = [ToolParams]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls is not ToolParams and cls.__module__.startswith("shard.agent.tools."):
            found.append(cls)
    return sorted(found, key=key)


def render() -> bytes:
    """What ``schemas.json`` should hold."""
    built = {key(p): fresh(p) for p in shipped_params()}  # sorted by key; each schema in its own order
    return orjson.dumps(built, option=orjson.OPT_INDENT_2) + b"\n"


if __name__ == "__main__":
    CACHE.write_bytes(render())
    print(f"wrote {CACHE}", file=sys.stderr)

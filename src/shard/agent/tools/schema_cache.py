"""Tool parameter schemas, built once and shipped with the package.

``model_json_schema()`` on every tool's parameter model took 26 to 46 ms of each runtime's start (and,
before it, building the models' validators). ``schemas.json`` beside this module holds the schema of
every parameter model defined in ``shard.agent.tools``, keyed by the model's import path; a tool's
spec reads it from there and builds only the models nobody cached (extension tools). The parameter
models themselves are built on first use (``defer_build``): a runtime that never calls ``edit`` never
builds ``EditParams``' validator.

The cache is generated, not hand-written: ``python -m shard.agent.tools.schema_cache`` rewrites it,
and ``tests/agent/tools/test_schema_cache.py`` fails while it differs from freshly built schemas.
"""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

CACHE = Path(__file__).with_name("schemas.json")
# The modules defining the parameter models the cache covers (every tool module Shard ships).
TOOL_MODULES = ("registry", "recall", "subagents")


def key(params: type[BaseModel]) -> str:
    return f"{params.__module__}:{params.__qualname__}"


def fresh(params: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model is offered, built now (the model's own title dropped)."""
    schema = params.model_json_schema()
    schema.pop("title", None)
    return schema


@functools.cache
def _cached() -> dict[str, dict[str, Any]]:
    try:
        data = orjson.loads(CACHE.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}  # a missing or broken cache costs time, never correctness
    return data if isinstance(data, dict) else {}


def schema(params: type[BaseModel]) -> dict[str, Any]:
    """The cached schema of ``params``, else a fresh one. Shared: callers do not modify it."""
    found = _cached().get(key(params))
    return found if found is not None else fresh(params)


def shipped_params() -> list[type[BaseModel]]:
    """Every tool parameter model defined in ``shard.agent.tools`` (importing its tool modules)."""
    from shard.agent.tools.base import ToolParams

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

"""Tool parameter schemas, built once and shipped with the package.

``model_json_schema()`` on every tool's parameter model took 26 to 46 ms of each runtime's start (and,
before it, building the models' validators). ``schemas.json`` beside this module holds the schema of
every parameter model defined in ``shard.agent.tools``, keyed by the model's import path; a tool's
spec reads it from there and builds only the models nobody cached (extension tools). The parameter
models themselves are built on first use (``defer_build``): a runtime that never calls ``edit`` never
builds ``EditParams``' validator.

The cache is generated, not hand-written: ``python -m shard.agent.tools.schema_gen`` rewrites it,
and ``tests/agent/tools/test_schema_cache.py`` fails while it differs from freshly built schemas.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

CACHE = Path(__file__).with_name("schemas.json")


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

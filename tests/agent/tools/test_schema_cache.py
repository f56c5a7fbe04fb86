"""Tool schemas are built once (``schemas.json``, generated) and read at start-up; a runtime builds a
tool's parameter model only when the tool is called."""

from __future__ import annotations

import json
import subprocess
import sys

from pydantic import Field

from shard.agent.tools import schema_cache, schema_gen
from shard.agent.tools.base import ToolParams
from shard.agent.tools.registry import build_tools


def test_the_shipped_cache_equals_freshly_built_schemas():
    """The file in the package is byte for byte what the parameter models give now: changing a
    tool's parameters without ``python -m shard.agent.tools.schema_gen`` fails here."""
    assert schema_cache.CACHE.read_bytes() == schema_gen.render()


def test_the_cache_covers_every_shipped_parameter_model():
    cached = json.loads(schema_cache.CACHE.read_text())
    shipped = schema_gen.shipped_params()
    assert {schema_cache.key(p) for p in shipped} == set(cached)
    assert {p.__name__ for p in shipped} >= {"ReadParams", "EditParams", "Replacement", "LaunchParams"}
    for params in shipped:
        assert cached[schema_cache.key(params)] == schema_cache.fresh(params)


def test_specs_offer_the_same_schemas_as_before():
    for tool in build_tools().values():
        assert tool.spec().parameters == schema_cache.fresh(tool.params), tool.name


def test_a_model_nobody_cached_gets_a_fresh_schema():
    class ExtensionParams(ToolParams):
        city: str = Field(description="Where.")

    got = schema_cache.schema(ExtensionParams)
    assert got["properties"]["city"]["description"] == "Where."
    assert got["required"] == ["city"]
    assert "title" not in got


_PROBE = r"""
import json
from shard.agent.tools.registry import build_tools
tools = build_tools()
specs = [t.spec() for t in tools.values()]
before = sorted(t.params.__name__ for t in tools.values() if t.params.__pydantic_complete__)
tools["read"].parse({"path": "a.txt"})
after = sorted(t.params.__name__ for t in tools.values() if t.params.__pydantic_complete__)
print(json.dumps({"specs": len(specs), "before": before, "after": after}))
"""


def test_offering_tools_builds_no_parameter_model():
    """In a fresh interpreter: building the tools and their specs leaves every parameter model
    unbuilt; the first call of ``read`` builds ReadParams (and only it)."""
    argv = [sys.executable, "-c", _PROBE]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout)
    assert result == {"specs": 7, "before": [], "after": ["ReadParams"]}

"""protocol_schema() and ``shard schema``: one JSON Schema document for the whole catalog."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import orjson
import pytest

from shard._version import PROTOCOL_VERSION
from shard.protocol.commands import ORCHESTRATOR_COMMANDS, PER_AGENT_COMMANDS
from shard.protocol.events import EVENTS
from shard.protocol.schema import protocol_schema

ALL_MODELS = {**PER_AGENT_COMMANDS, **ORCHESTRATOR_COMMANDS, **EVENTS}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return protocol_schema()


def walk(node: Any):
    """Every dict inside a JSON document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def def_name(ref: str) -> str:
    assert ref.startswith("#/$defs/"), ref
    return ref.removeprefix("#/$defs/")


def message_defs(schema: dict[str, Any]) -> dict[str, str]:
    """Wire ``type`` -> $defs name, for every message the top-level union references."""
    out: dict[str, str] = {}
    for group in schema["anyOf"]:
        for option in group.get("oneOf", [group]):
            name = def_name(option["$ref"])
            out[schema["$defs"][name]["properties"]["type"]["const"]] = name
    return out


def test_schema_is_a_json_document(schema):
    """Covers: R5.0.1"""
    assert isinstance(schema, dict)
    text = json.dumps(schema, allow_nan=False)  # plain JSON: str keys, no NaN, no objects
    assert json.loads(text) == schema
    assert orjson.loads(orjson.dumps(schema)) == schema


def test_schema_header(schema):
    """Covers: R7.1"""
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert PROTOCOL_VERSION in schema["$id"]
    assert PROTOCOL_VERSION in schema["title"]


def test_every_message_type_is_a_const_in_the_schema(schema):
    """Covers: R5.0.2, R5.0.6"""
    consts = {node["const"] for node in walk(schema) if "const" in node}
    assert set(ALL_MODELS) <= consts


def test_top_level_union_is_exactly_the_catalog(schema):
    """Covers: R5.0.5, R5.0.6"""
    defs = message_defs(schema)
    assert set(defs) == set(ALL_MODELS)
    for wire_type, name in defs.items():
        assert name == ALL_MODELS[wire_type].__name__


def test_every_ref_resolves(schema):
    """Covers: R5.0.1"""
    refs = {node["$ref"] for node in walk(schema) if "$ref" in node}
    assert refs
    for ref in refs:
        assert def_name(ref) in schema["$defs"]


def test_every_message_requires_its_type_and_constant_fields(schema):
    """A message without ``type`` is not a message (R5.0.2); fields the protocol fixes to one value
    (``agent_exited.runtime_state``, ``model_changed.effective``, …) are required parts of the shape.
    A plain JSON Schema validator ignores ``discriminator``, so ``required`` is what enforces this.

    Covers: R5.0.2, R10.2.12, R10.2.1
    """
    models = {**PER_AGENT_COMMANDS, **ORCHESTRATOR_COMMANDS, **EVENTS}
    missing = []
    for wire_type, name in message_defs(schema).items():
        definition = schema["$defs"][name]
        required = set(definition.get("required", []))
        fields = models[wire_type].model_fields
        for prop, prop_schema in definition["properties"].items():
            optional = prop in fields and not fields[prop].is_required() and fields[prop].default is None
            if "const" in prop_schema and prop not in required and not optional:
                missing.append(f"{name}.{prop}")
    assert missing == []
    assert "version" not in schema["$defs"]["WorkspaceList"].get("required", []), "version stays optional"


def test_messages_allow_additional_properties(schema):
    """Covers: R5.0.4"""
    for name in message_defs(schema).values():
        assert schema["$defs"][name].get("additionalProperties") is True, name


@pytest.mark.parametrize(
    "name",
    [
        "Message",
        "Image",
        "ModelDescriptor",
        "AgentInfo",
        "Usage",
        "PermissionDetail",
        "PermissionChoice",
        "Hunk",
        "TreeNode",
        "LiveWindow",
        "ErrorInfo",
    ],
)
def test_shared_types_are_defined(schema, name):
    """Covers: R11.0.1, R11.0.2, R11.0.3, R11.0.18, R11.0.19, R9.5.2, R9.5.3"""
    assert name in schema["$defs"]
    assert schema["$defs"][name]["type"] == "object"


def kinds_of_union(schema: dict[str, Any], node: dict[str, Any], tag: str) -> set[str]:
    options = node.get("oneOf") or node.get("anyOf")
    out = set()
    for option in options:
        if "$ref" in option:
            out.add(schema["$defs"][def_name(option["$ref"])]["properties"][tag]["const"])
        else:
            out |= kinds_of_union(schema, option, tag) if ("oneOf" in option or "anyOf" in option) else set()
    return out


def test_render_descriptor_kinds_in_schema(schema):
    """Covers: R11.0.6"""
    render = schema["$defs"]["ToolCall"]["properties"]["render"]
    assert kinds_of_union(schema, render, "kind") == {
        "text",
        "kv",
        "diff",
        "tree",
        "progress",
        "status",
        "command",
        "path_list",
        "code",
    }
    status = schema["$defs"]["StatusRender"]["properties"]["tone"]
    assert set(status["enum"]) == {"info", "warn", "error"}
    command = schema["$defs"]["CommandRender"]["properties"]
    assert {"exitCode", "durationMs"} <= set(command)


def test_content_union_kinds_in_schema(schema):
    """Covers: R11.0.4, R11.0.5"""
    message = schema["$defs"]["Message"]
    assert set(message["properties"]["role"]["enum"]) == {"user", "assistant"}
    blocks = kinds_of_union(schema, message["properties"]["content"]["items"], "type")
    assert {"text", "tool_call", "tool_result", "thinking"} <= blocks
    result = kinds_of_union(schema, schema["$defs"]["ToolResult"]["properties"]["content"], "kind")
    assert result == {"text", "json", "error"}


def test_agent_status_enum_in_schema(schema):
    """Covers: R9.1.20"""
    status = schema["$defs"]["Status"]["properties"]["status"]
    assert set(status["enum"]) == {
        "idle",
        "streaming",
        "waiting_for_permission",
        "waiting_for_ui",
        "compacting",
        "error",
    }


def test_ui_response_value_schema_allows_string_array_null(schema):
    """Covers: R9.5.21"""
    value = schema["$defs"]["UiResponse"]["properties"]["value"]
    kinds = {option.get("type") for option in value["anyOf"]}
    assert kinds == {"string", "array", "null"}
    assert "value" in schema["$defs"]["UiResponse"]["required"]


def test_shard_schema_command_prints_the_schema():
    """Covers: R5.0.1"""
    proc = subprocess.run(
        [sys.executable, "-m", "shard", "schema"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert orjson.loads(proc.stdout) == protocol_schema()

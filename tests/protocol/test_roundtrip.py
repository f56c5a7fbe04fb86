"""Every command and event round-trips: wire dict -> parse -> to_wire() gives the same dict.

Examples are built from each model's own JSON Schema, so a message type added to
``PER_AGENT_COMMANDS`` / ``ORCHESTRATOR_COMMANDS`` / ``EVENTS`` is covered without touching this file.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shard.protocol.codec import parse_command, parse_event
from shard.protocol.commands import ORCHESTRATOR_COMMANDS, PER_AGENT_COMMANDS
from shard.protocol.events import EVENTS

# --- the catalog of PROTOCOL §9, §10, §10.1a, §10.3 ---------------------------------------------

EXPECTED_PER_AGENT_COMMANDS = {
    # §9.2
    "prompt",
    "steer",
    "abort",
    "set_mode",
    "list_modes",
    "list_models",
    "set_model",
    "list_reasoning_levels",
    "set_reasoning_level",
    "session_op",
    "unqueue",  # additive: the queue (protocol/queue.py)
    "session.activate",  # named by §9.2 fork, defined additively (orchestrator.py answers it)
    # §9.5
    "permission_response",
    "ui_response",
}
EXPECTED_ORCHESTRATOR_COMMANDS = {
    # §10.1
    "agent.list",
    "agent.create",
    "agent.attach",
    "agent.detach",
    "agent.terminate",
    "agent.kill",
    "agent.status",
    "daemon.shutdown",
    "daemon.compare_env",  # Shard, additive (shard run: issue 26 item 1)
    # §10.1a
    "workspace.create",
    "workspace.attach",
    "workspace.list",
    "workspace.status",
    "workspace.retire",
    "workspace.diff",
    # §10.3
    "subagent.create",
    "subagent.wait",
    "subagent.steer",
    "subagent.relaunch",
    "subagent.status",
    "subagent.stop",
}
EXPECTED_EVENTS = {
    # §9.1
    "hello",
    "sync",
    "status",
    # §9.3
    "response",
    # §9.4
    "turn_start",
    "message_delta",
    "message_complete",
    "tool_call",
    "tool_result",
    "turn_end",
    "usage",
    "compaction",
    "error",
    "queue_changed",  # additive: the queue (protocol/queue.py)
    # §9.5
    "permission_request",
    "permission_resolved",
    "ui_request",
    "ui_resolved",
    # §10.2
    "model_changed",
    "mode_changed",
    "reasoning_level_changed",
    "agent_spawned",
    "agent_exited",
    "agent_status_changed",
    "agent_activity",
    "workspace_created",
    "workspace_attached",
    "workspace_retired",
    "workspace_conflict",
    # §10.3
    "subagent_run_changed",
}

ALL_MESSAGES: list[tuple[str, str, type]] = (
    [("per_agent", t, m) for t, m in PER_AGENT_COMMANDS.items()]
    + [("orchestrator", t, m) for t, m in ORCHESTRATOR_COMMANDS.items()]
    + [("event", t, m) for t, m in EVENTS.items()]
)
MESSAGE_IDS = [f"{kind}:{name}" for kind, name, _ in ALL_MESSAGES]


def test_catalog_is_complete_and_split_by_layer():
    """Covers: R5.0.6, R10.1.1"""
    assert set(PER_AGENT_COMMANDS) >= EXPECTED_PER_AGENT_COMMANDS
    assert set(ORCHESTRATOR_COMMANDS) >= EXPECTED_ORCHESTRATOR_COMMANDS
    assert set(EVENTS) >= EXPECTED_EVENTS
    assert not set(PER_AGENT_COMMANDS) & EXPECTED_ORCHESTRATOR_COMMANDS
    assert not set(ORCHESTRATOR_COMMANDS) & EXPECTED_PER_AGENT_COMMANDS


def test_command_and_event_types_never_overlap():
    """A ``type`` names exactly one message, whichever direction it travels.

    Covers: R5.0.5, R5.0.6
    """
    assert not set(PER_AGENT_COMMANDS) & set(ORCHESTRATOR_COMMANDS)
    assert not (set(PER_AGENT_COMMANDS) | set(ORCHESTRATOR_COMMANDS)) & set(EVENTS)


@pytest.mark.parametrize(("kind", "name", "model"), ALL_MESSAGES, ids=MESSAGE_IDS)
def test_registry_key_matches_the_model_tag(kind, name, model):
    """Covers: R5.0.2"""
    assert model.model_fields["type"].default == name


# --- a JSON-Schema-driven example builder -------------------------------------------------------

EXTRA_KEY = "x_future_field"
EXTRA_VALUE: Any = {"added_in": "0.2", "list": [1, 2.5, None, True, "s\u2028"], "obj": {"k": None}}
ANY_VALUE: Any = {"nested": [1, -2, 3.25, None, False, "é😀", {"deep": []}]}
FULL_TEXT = 'str "q" \\ é ✓ 😀 \u2028\u2029 \n\r\t'
MAX_DEPTH = 5


class Fixed:
    """Deterministic choices: ``full`` fills every optional field, ``variant`` picks union members."""

    def __init__(self, *, full: bool, variant: int) -> None:
        self.full = full
        self.variant = variant

    def include_optional(self, depth: int) -> bool:
        return self.full and depth < MAX_DEPTH

    def null_when_nullable(self) -> bool:
        return not self.full

    def pick(self, n: int) -> int:
        return self.variant % n

    def add_extra(self, depth: int) -> bool:
        return self.full and depth < MAX_DEPTH

    def length(self, lo: int, n_variants: int, depth: int) -> int:
        return max(lo, n_variants if self.full and depth < MAX_DEPTH else 0)

    def text(self, min_len: int, pattern: str | None = None) -> str:
        return FULL_TEXT if self.full else "s" * max(min_len, 1)

    def integer(self, lo: int | None) -> int:
        return 42 if self.full else max(lo or 0, 1)

    def number(self, lo: float | None) -> float:
        return 2.5 if self.full else 1.5

    def boolean(self) -> bool:
        return self.full

    def any_value(self) -> Any:
        return ANY_VALUE if self.full else None


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


class Drawn:
    """Choices drawn by hypothesis."""

    def __init__(self, data) -> None:
        self.data = data

    def include_optional(self, depth: int) -> bool:
        return depth < MAX_DEPTH and self.data.draw(st.booleans())

    def null_when_nullable(self) -> bool:
        return self.data.draw(st.booleans())

    def pick(self, n: int) -> int:
        return self.data.draw(st.integers(0, n - 1))

    def add_extra(self, depth: int) -> bool:
        return depth < MAX_DEPTH and self.data.draw(st.booleans())

    def length(self, lo: int, n_variants: int, depth: int) -> int:
        hi = lo if depth >= MAX_DEPTH else max(lo, 3)
        return self.data.draw(st.integers(lo, hi))

    def text(self, min_len: int, pattern: str | None = None) -> str:
        drawn = st.text(min_size=min_len, max_size=12)
        if pattern is not None:  # a constrained string (a cwd has no NUL): only what the schema allows
            drawn = drawn.filter(lambda t: re.search(pattern, t) is not None)
        return self.data.draw(drawn)

    def integer(self, lo: int | None) -> int:
        return self.data.draw(st.integers(lo if lo is not None else -(2**53), 2**53))

    def number(self, lo: float | None) -> float:
        return self.data.draw(st.floats(min_value=lo, allow_nan=False, allow_infinity=False))

    def boolean(self) -> bool:
        return self.data.draw(st.booleans())

    def any_value(self) -> Any:
        return self.data.draw(json_values)


class Builder:
    def __init__(self, schema: dict[str, Any], choose) -> None:
        self.defs = schema.get("$defs", {})
        self.choose = choose

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def value(self, schema: dict[str, Any], depth: int, *, required: bool = True) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][self.choose.pick(len(schema["enum"]))]
        options = schema.get("anyOf") or schema.get("oneOf")
        if options is not None:
            concrete = [o for o in options if o.get("type") != "null"]
            if len(concrete) < len(options) and required and self.choose.null_when_nullable():
                return None  # a required field that may be null: send the explicit null
            return self.value(concrete[self.choose.pick(len(concrete))], depth)
        kind = schema.get("type")
        if kind == "object":
            return self.obj(schema, depth)
        if kind == "array":
            return self.array(schema, depth)
        if kind == "string":
            return self.choose.text(schema.get("minLength", 0), schema.get("pattern"))
        if kind == "integer":
            lo = schema.get("minimum")
            if "exclusiveMinimum" in schema:
                lo = schema["exclusiveMinimum"] + 1
            return self.choose.integer(lo)
        if kind == "number":
            return self.choose.number(schema.get("minimum"))
        if kind == "boolean":
            return self.choose.boolean()
        if kind == "null":
            return None
        assert not schema.get("type"), f"unhandled schema {schema}"
        return self.choose.any_value()  # Any / unknown

    def obj(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        for name, prop in props.items():
            is_tag = "const" in self.resolve(prop)
            if name in required or is_tag:
                out[name] = self.value(prop, depth + 1)
            elif self.choose.include_optional(depth):
                out[name] = self.value(prop, depth + 1, required=False)
        extra = schema.get("additionalProperties")
        if extra is True and self.choose.add_extra(depth):
            out[EXTRA_KEY if props else "free_key"] = self.choose.any_value() if not props else EXTRA_VALUE
        elif isinstance(extra, dict) and self.choose.add_extra(depth):
            out["k"] = self.value(extra, depth + 1)
        return out

    def array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        if "prefixItems" in schema:
            return [self.value(item, depth + 1) for item in schema["prefixItems"]]
        items = self.resolve(schema.get("items", {}))
        union = items.get("oneOf") or items.get("anyOf")
        n_variants = len(union) if union else 2
        n = self.choose.length(schema.get("minItems", 0), n_variants, depth)
        if "maxItems" in schema:
            n = min(n, schema["maxItems"])
        if union and isinstance(self.choose, Fixed) and self.choose.full:
            # one of every union member, in order
            return [
                Builder({"$defs": self.defs}, Fixed(full=True, variant=i)).value(
                    union[i % len(union)], depth + 1
                )
                for i in range(n)
            ]
        return [self.value(items, depth + 1) for _ in range(n)]


def fix_model_rules(name: str, example: dict[str, Any], choose) -> dict[str, Any]:
    """Apply the cross-field rules a JSON Schema cannot express (model validators)."""
    if name == "session_op":
        if example["op"] == "fork":
            example["args"] = {**(example.get("args") or {}), "from_entry_id": "ent-1"}
        elif example["op"] == "compact" and isinstance(example.get("args"), dict):
            example["args"]["keep_recent_tokens"] = 2048
    elif name in ("permission_response", "permission_resolved"):
        if choose.pick(2) == 0:
            example.pop("decision", None)
            example["choice_id"] = example.get("choice_id") or "choice-1"
        else:
            example.pop("choice_id", None)
            example["decision"] = example.get("decision") or "allow_always"
    elif name == "subagent.create":
        if choose.pick(2) == 0:
            example.pop("tasks", None)
            example["name"] = example.get("name") or "scout"
            example["task"] = example.get("task") or "look around"
        else:
            example.pop("name", None)
            example.pop("task", None)
            example["tasks"] = example.get("tasks") or [{"name": "a", "task": "b"}]
            example["strategy"] = example.get("strategy") or "chain"
    return example


EXCLUSIVE_FIELDS = {
    "permission_response": {"choice_id", "decision"},
    "permission_resolved": {"choice_id", "decision"},
    "subagent.create": {"name", "task", "tasks"},
}


def build_example(name: str, model: type, choose) -> dict[str, Any]:
    schema = model.model_json_schema()
    example = Builder(schema, choose).value(schema, 0)
    return fix_model_rules(name, example, choose)


def parse(kind: str, line: bytes):
    if kind == "event":
        return parse_event(line)
    return parse_command(line, orchestrator=kind == "orchestrator")


def assert_round_trip(kind: str, name: str, model: type, example: dict[str, Any]) -> None:
    line = orjson.dumps(example)
    message = parse(kind, line)
    assert type(message) is model
    assert message.type == name
    wire = message.to_wire()
    assert wire == example
    assert orjson.loads(message.to_json()) == wire
    # and again from what we wrote: a stable fixed point
    assert parse(kind, message.to_json()).to_wire() == example


N_VARIANTS = 9  # the largest union (RenderDescriptor) has nine members

EXAMPLE_CASES = [
    pytest.param(kind, name, model, full, variant, id=f"{kind}:{name}:{'max' if full else 'min'}{variant}")
    for kind, name, model in ALL_MESSAGES
    for full, variants in ((False, range(2)), (True, range(N_VARIANTS)))
    for variant in variants
]


@pytest.mark.parametrize(("kind", "name", "model", "full", "variant"), EXAMPLE_CASES)
def test_every_message_round_trips(kind, name, model, full, variant):
    """Minimal and maximal examples of every message parse and serialize back unchanged, including
    unknown extra fields at every level and explicit nulls.

    Covers: R5.0.1, R5.0.2, R5.0.4, R5.0.5, R5.1.1
    """
    choose = Fixed(full=full, variant=variant)
    example = build_example(name, model, choose)
    if full:
        # the builder really filled the message: every declared field and an unknown one
        declared = set(model.model_json_schema().get("properties", {})) - EXCLUSIVE_FIELDS.get(name, set())
        assert declared <= set(example)
        assert example[EXTRA_KEY] == EXTRA_VALUE
    assert_round_trip(kind, name, model, example)


@pytest.mark.parametrize(("kind", "name", "model"), ALL_MESSAGES, ids=MESSAGE_IDS)
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_random_messages_round_trip(kind, name, model, data):
    """Covers: R5.0.1, R5.0.4, R5.0.5"""
    choose = Drawn(data)
    example = build_example(name, model, choose)
    assert_round_trip(kind, name, model, example)


@pytest.mark.parametrize(("kind", "name", "model"), ALL_MESSAGES, ids=MESSAGE_IDS)
def test_unknown_top_level_fields_survive(kind, name, model):
    """Additive evolution: fields from a newer peer are kept, whatever their JSON type.

    Covers: R5.0.4
    """
    example = build_example(name, model, Fixed(full=False, variant=1))
    example.update(
        {"zz_str": "v", "zz_num": 1.25, "zz_null": None, "zz_list": [{"a": [None]}], "zz_bool": False}
    )
    assert_round_trip(kind, name, model, example)


@pytest.mark.parametrize(("kind", "name", "model"), ALL_MESSAGES, ids=MESSAGE_IDS)
def test_constructed_message_round_trips(kind, name, model):
    """A message built in Python (as the server builds what it sends) reads back equal.

    Covers: R5.0.1, R5.0.5
    """
    example = build_example(name, model, Fixed(full=True, variant=3))
    built = model(**example)
    wire = built.to_wire()
    assert wire == example
    assert parse(kind, built.to_json()).to_wire() == wire


# --- explicit nulls -----------------------------------------------------------------------------

NULL_CASES = [
    ("per_agent", {"type": "ui_response", "request_id": "req-1", "value": None}),
    ("per_agent", {"type": "ui_response", "agent_id": "agent-1", "request_id": "req-1", "value": None}),
    ("event", {"type": "ui_resolved", "request_id": "req-1", "value": None}),
    ("event", {"type": "response", "id": "r", "command": "abort", "success": True, "data": None}),
    (
        "event",
        {
            "type": "response",
            "id": "r",
            "command": "abort",
            "success": False,
            "error": {"code": "CONFLICT", "message": "busy", "data": None},
        },
    ),
    (
        "event",
        {
            "type": "permission_request",
            "request_id": "req-2",
            "tool_name": "bash",
            "input": None,
            "prompt": "Run?",
            "options": ["allow", "deny"],
        },
    ),
    (
        "event",
        {
            "type": "tool_result",
            "tool_call_id": "tc-1",
            "content": {"kind": "json", "value": None},
            "is_error": False,
        },
    ),
    (
        "event",
        {
            "type": "model_changed",
            "previous": None,
            "active": {"id": "p/m", "provider": "p", "model": "m"},
            "effective": "next_provider_call",
        },
    ),
]


@pytest.mark.parametrize(("kind", "message"), NULL_CASES, ids=[m["type"] for _, m in NULL_CASES])
def test_explicit_nulls_survive(kind, message):
    """A ``null`` that means something (no answer, no data, no previous model) stays on the wire.

    Covers: R9.5.21, R9.5.22, R9.3.1, R9.5.1
    """
    parsed = parse(kind, orjson.dumps(message))
    assert parsed.to_wire() == message
    assert orjson.loads(parsed.to_json()) == message


def test_ui_response_array_value_round_trips():
    """Covers: R9.5.21"""
    message = {"type": "ui_response", "request_id": "req-1", "value": ["a", "b\u2028"]}
    assert parse_command(orjson.dumps(message)).to_wire() == message


def test_absent_optional_fields_stay_absent():
    """Fields that were never sent are not invented on the way out (no ``null`` padding).

    Covers: R5.0.4, R9.1.19
    """
    message = {"type": "status", "status": "idle"}
    assert parse_event(orjson.dumps(message)).to_wire() == message
    command = {"type": "prompt", "message": "hi"}
    assert parse_command(orjson.dumps(command)).to_wire() == command

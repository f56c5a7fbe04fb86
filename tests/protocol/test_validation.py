"""parse_command rejects what is not a valid command with INVALID_REQUEST (PROTOCOL §5, §8, §9.2, §9.5,
§10.3), naming the offending field and keeping the id/command it could read."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from shard.protocol.codec import error_response, parse_command, parse_event
from shard.protocol.commands import (
    ORCHESTRATOR_COMMANDS,
    PER_AGENT_COMMANDS,
    CompactArgs,
    ForkArgs,
    SessionListArgs,
    SessionOp,
    SubagentCreate,
)
from shard.protocol.errors import ErrorCode, FrameError
from shard.protocol.events import EVENTS
from shard.protocol.framing import LineBuffer, Oversized
from shard.protocol.headless import HEADLESS_POLICIES

# One minimal valid example per command. A new command type must get an entry here
# (test_every_command_has_a_minimal_example) so the generic checks below cover it.
MINIMAL: dict[str, dict[str, Any]] = {
    "prompt": {"type": "prompt", "message": "hi"},
    "steer": {"type": "steer", "message": "also"},
    "abort": {"type": "abort"},
    "unqueue": {"type": "unqueue", "queue_id": "queue-1"},
    "session.activate": {"type": "session.activate", "session_id": "sess-1"},
    "set_mode": {"type": "set_mode", "mode": "plan"},
    "list_modes": {"type": "list_modes"},
    "list_models": {"type": "list_models"},
    "set_model": {"type": "set_model", "model": "p/m"},
    "list_reasoning_levels": {"type": "list_reasoning_levels"},
    "set_reasoning_level": {"type": "set_reasoning_level", "model": "p/m", "effort": "high"},
    "session_op": {"type": "session_op", "op": "list"},
    "permission_response": {"type": "permission_response", "request_id": "req-1", "decision": "allow"},
    "ui_response": {"type": "ui_response", "request_id": "req-1", "value": "yes"},
    "agent.list": {"type": "agent.list"},
    "agent.create": {"type": "agent.create", "cwd": "/tmp/p"},
    "agent.attach": {"type": "agent.attach", "agent_id": "agent-1"},
    "agent.detach": {"type": "agent.detach", "agent_id": "agent-1"},
    "agent.terminate": {"type": "agent.terminate", "agent_id": "agent-1"},
    "agent.kill": {"type": "agent.kill", "agent_id": "agent-1"},
    "agent.remove": {"type": "agent.remove", "agent_id": "agent-1"},
    "agent.rename": {"type": "agent.rename", "agent_id": "agent-1", "name": "fix it"},
    "fs.list": {"type": "fs.list", "agent_id": "agent-1"},
    "fs.read": {"type": "fs.read", "agent_id": "agent-1", "path": "a.txt"},
    "fs.complete": {"type": "fs.complete", "prefix": "/ho"},
    "client.identify": {"type": "client.identify", "name": "my-bot"},
    "host.list": {"type": "host.list"},
    "agent.status": {"type": "agent.status"},
    "daemon.shutdown": {"type": "daemon.shutdown"},
    "daemon.compare_env": {"type": "daemon.compare_env", "nonce": "0" * 32, "variables": {}},
    "workspace.create": {"type": "workspace.create", "cwd": "/tmp/p"},
    "workspace.attach": {"type": "workspace.attach", "workspace_id": "ws-1"},
    "workspace.list": {"type": "workspace.list"},
    "workspace.status": {"type": "workspace.status", "workspace_id": "ws-1"},
    "workspace.retire": {"type": "workspace.retire", "workspace_id": "ws-1"},
    "workspace.diff": {"type": "workspace.diff", "workspace_id": "ws-1"},
    "subagent.create": {"type": "subagent.create", "parent_agent_id": "agent-p", "name": "a", "task": "t"},
    "subagent.wait": {"type": "subagent.wait", "parent_agent_id": "agent-p", "handles": ["job-1"]},
    "subagent.steer": {
        "type": "subagent.steer",
        "parent_agent_id": "agent-p",
        "target": "run-1",
        "message": "m",
    },
    "subagent.relaunch": {
        "type": "subagent.relaunch",
        "parent_agent_id": "agent-p",
        "target": "x",
        "task": "t",
    },
    "subagent.status": {"type": "subagent.status", "parent_agent_id": "agent-p"},
    "subagent.stop": {"type": "subagent.stop", "parent_agent_id": "agent-p", "handle": "job-1"},
}
ALL_COMMANDS = {**PER_AGENT_COMMANDS, **ORCHESTRATOR_COMMANDS}


def line(obj: Any) -> bytes:
    return orjson.dumps(obj)


def reject(obj_or_line: Any, *, orchestrator: bool = True) -> FrameError:
    data = obj_or_line if isinstance(obj_or_line, bytes | str | Oversized) else line(obj_or_line)
    with pytest.raises(FrameError) as info:
        parse_command(data, orchestrator=orchestrator)
    err = info.value
    assert err.code is ErrorCode.INVALID_REQUEST
    assert err.to_wire()["code"] == "INVALID_REQUEST"
    return err


def with_id(obj: dict[str, Any], msg_id: str = "cmd-7") -> dict[str, Any]:
    """``obj`` with a correlation id, unless it already has an ``id`` of its own."""
    return {"id": msg_id, **obj}


def expected_id(obj: dict[str, Any]) -> str | None:
    return obj["id"] if isinstance(obj.get("id"), str) else None


def test_every_command_has_a_minimal_example():
    """Covers: R5.0.6"""
    assert set(MINIMAL) == set(ALL_COMMANDS)


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_minimal_examples_are_valid(name):
    """Covers: R5.1.1, R5.1.6"""
    command = parse_command(line(MINIMAL[name]), orchestrator=True)
    assert type(command) is ALL_COMMANDS[name]
    assert command.to_wire() == MINIMAL[name]
    assert parse_command(line(with_id(MINIMAL[name])), orchestrator=True).id == "cmd-7"


# --- not a message at all -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"{bad",
        b"",
        b"   ",
        b'{"type":"abort"',
        b'{"type":"abort"}}',
        b"{'type':'abort'}",
        b"\xff\xfe{}",
        b"NaN",
    ],
)
def test_bad_json_is_invalid_request(raw):
    """Covers: R8.5, R8.6"""
    err = reject(raw)
    assert err.id is None
    assert err.command is None
    assert "JSON" in err.message


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"[]", "array"),
        (b'[{"type":"abort"}]', "array"),
        (b'"abort"', "string"),
        (b"5", "number"),
        (b"null", "null"),
    ],
)
def test_non_object_is_invalid_request(raw, kind):
    """Covers: R5.0.2, R8.5"""
    err = reject(raw)
    assert "object" in err.message
    assert kind in err.message
    assert err.id is None
    assert err.command is None


def test_missing_type_is_invalid_request_and_keeps_id():
    """Covers: R5.0.2, R8.5"""
    err = reject({"id": "cmd-1", "message": "hi"})
    assert "'type'" in err.message
    assert err.id == "cmd-1"
    assert err.command is None


@pytest.mark.parametrize("bad_type", [5, None, True, ["prompt"], {"t": "prompt"}])
def test_non_string_type_is_invalid_request(bad_type):
    """Covers: R5.0.2, R8.5"""
    err = reject({"id": "cmd-1", "type": bad_type, "message": "hi"})
    assert "'type'" in err.message
    assert err.id == "cmd-1"
    assert err.command is None


@pytest.mark.parametrize(
    "unknown", ["nope", "Prompt", "prompt ", "agent.spawn", "subscribe", "session.list", ""]
)
@pytest.mark.parametrize("orchestrator", [False, True])
def test_unknown_type_is_invalid_request(unknown, orchestrator):
    """Covers: R5.0.6, R8.5"""
    err = reject({"id": "cmd-1", "type": unknown}, orchestrator=orchestrator)
    assert f"'{unknown}'" in err.message
    assert err.id == "cmd-1"
    assert err.command == unknown


@pytest.mark.parametrize("event_type", sorted(EVENTS))
@pytest.mark.parametrize("orchestrator", [False, True])
def test_event_type_sent_as_command_is_invalid_request(event_type, orchestrator):
    """Covers: R5.0.6, R8.5"""
    err = reject({"id": "cmd-1", "type": event_type}, orchestrator=orchestrator)
    assert f"'{event_type}'" in err.message
    assert "event" in err.message
    assert err.id == "cmd-1"
    assert err.command == event_type


def test_non_string_id_is_not_echoed():
    """Covers: R5.0.3"""
    err = reject({"id": 5, "type": "nope"})
    assert err.id is None
    assert err.command == "nope"


# --- layers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ORCHESTRATOR_COMMANDS))
def test_orchestrator_command_rejected_on_direct_connection(name):
    """Covers: R10.1.1, R5.2.7, R5.0.6"""
    err = reject(with_id(MINIMAL[name]), orchestrator=False)
    assert f"'{name}'" in err.message
    assert err.id == "cmd-7"
    assert err.command == name
    command = parse_command(line(with_id(MINIMAL[name])), orchestrator=True)
    assert type(command) is ORCHESTRATOR_COMMANDS[name]


@pytest.mark.parametrize("name", sorted(PER_AGENT_COMMANDS))
@pytest.mark.parametrize("orchestrator", [False, True])
def test_per_agent_command_accepted_on_both_connections(name, orchestrator):
    """Covers: R5.0.6, R5.1.1"""
    command = parse_command(line(with_id(MINIMAL[name])), orchestrator=orchestrator)
    assert type(command) is PER_AGENT_COMMANDS[name]
    assert command.id == "cmd-7"


def test_per_agent_command_carries_routing_agent_id():
    """Covers: R5.0.3, R5.0.4"""
    command = parse_command(line({"type": "abort", "id": "c", "agent_id": "agent-1"}), orchestrator=True)
    assert command.agent_id == "agent-1"
    assert command.to_wire() == {"type": "abort", "id": "c", "agent_id": "agent-1"}


# --- shape errors: missing and wrongly typed fields ---------------------------------------------

REQUIRED_FIELD_CASES = [
    (name, field)
    for name, model in sorted(ALL_COMMANDS.items())
    for field in model.model_json_schema().get("required", [])
]


def test_required_field_cases_exist():
    """Covers: R8.7"""
    assert ("prompt", "message") in REQUIRED_FIELD_CASES
    assert ("subagent.wait", "handles") in REQUIRED_FIELD_CASES
    assert ("ui_response", "value") in REQUIRED_FIELD_CASES


@pytest.mark.parametrize(("name", "field"), REQUIRED_FIELD_CASES)
def test_missing_required_field_names_it(name, field):
    """Covers: R8.5, R8.7, R9.2.1, R9.5.21"""
    obj = with_id(MINIMAL[name])
    assert field in obj
    del obj[field]
    err = reject(obj)
    assert f"'{field}'" in err.message
    assert err.id == "cmd-7"
    # without its type a line names no command; with it, the answer echoes the command
    assert err.command == (None if field == "type" else name)


def json_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str] | None:
    """The JSON types a field schema admits; None for "anything"."""
    if "$ref" in schema:
        return json_types(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return {type(v).__name__ for v in values}
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        out: set[str] = set()
        for option in options:
            types = json_types(option, defs)
            if types is None:
                return None
            out |= types
        return out
    kind = schema.get("type")
    if kind is None:
        return None
    return {
        {"object": "dict", "array": "list", "string": "str", "integer": "int", "number": "float"}.get(
            kind, kind
        )
    }


WRONG_TYPE_CASES = []
for _name, _model in sorted(ALL_COMMANDS.items()):
    _schema = _model.model_json_schema()
    for _field, _prop in _schema["properties"].items():
        if _field == "type":
            continue
        _types = json_types(_prop, _schema.get("$defs", {}))
        if _types is None:
            continue
        _bad = {"wrong": 1} if "dict" not in _types else "wrong"
        WRONG_TYPE_CASES.append(pytest.param(_name, _field, _bad, id=f"{_name}.{_field}"))


@pytest.mark.parametrize(("name", "field", "bad"), WRONG_TYPE_CASES)
def test_wrong_json_type_names_the_field(name, field, bad):
    """Every declared field of every command rejects a value of the wrong JSON type.

    Covers: R8.5, R8.7, R5.0.3
    """
    obj = with_id({**MINIMAL[name], field: bad})
    err = reject(obj)
    assert f"'{field}" in err.message
    assert err.id == expected_id(obj)
    assert err.command == name


WRONG_VALUES = [
    ({"type": "prompt", "message": 5}, "message"),
    ({"type": "prompt", "message": "m", "images": "img"}, "images"),
    ({"type": "prompt", "message": "m", "images": [{"type": "image", "mime_type": "x"}]}, "images.0.data"),
    (
        {"type": "prompt", "message": "m", "images": [{"type": "image", "data": 1, "mime_type": "x"}]},
        "images.0.data",
    ),
    ({"type": "prompt", "message": "m", "streaming_behavior": "later"}, "streaming_behavior"),
    ({"type": "set_mode", "mode": ["plan"]}, "mode"),
    ({"type": "agent.attach", "agent_id": "a", "role": "admin"}, "role"),
    ({"type": "agent.create", "cwd": "/", "headless_policy": "allow"}, "headless_policy"),
    ({"type": "agent.create", "cwd": "/", "tools": "read"}, "tools"),
    ({"type": "agent.create", "cwd": "/", "launch_policy": {"maxTasks": 1}}, "launch_policy.maxDepth"),
    ({"type": "workspace.list", "version": 2}, "version"),
    ({"type": "workspace.retire", "workspace_id": "w", "branch_disposition": "delete"}, "branch_disposition"),
    ({"type": "subagent.wait", "parent_agent_id": "p", "handles": "job-1"}, "handles"),
    ({"type": "subagent.wait", "parent_agent_id": "p", "handles": []}, "handles"),
    ({"type": "subagent.wait", "parent_agent_id": "p", "handles": ["j"], "mode": "some"}, "mode"),
    ({"type": "ui_response", "request_id": "r", "value": 5}, "value"),
    ({"type": "ui_response", "request_id": "r", "value": [1]}, "value"),
    ({"type": "ui_response", "request_id": "r", "value": {"a": "b"}}, "value"),
    ({"type": "permission_response", "request_id": "r", "decision": "allow", "reason": 5}, "reason"),
    ({"type": "abort", "agent_id": 5}, "agent_id"),
    ({"type": "abort", "id": ["x"]}, "id"),
    # JSON of the wrong type must not be coerced into the declared one
    ({"type": "agent.kill", "agent_id": "a", "force": "yes"}, "force"),
    ({"type": "agent.kill", "agent_id": "a", "force": 1}, "force"),
    ({"type": "subagent.wait", "parent_agent_id": "p", "handles": ["j"], "timeout": "5"}, "timeout"),
    ({"type": "agent.create", "cwd": "/", "depth": "3"}, "depth"),
    ({"type": "workspace.list", "version": True}, "version"),
]


@pytest.mark.parametrize(("obj", "field"), WRONG_VALUES, ids=[f"{o['type']}:{f}" for o, f in WRONG_VALUES])
def test_wrong_field_values_are_rejected(obj, field):
    """Covers: R8.5, R8.7, R9.2.1, R9.5.21, R10.1.5, R10.1.19, R5.0.3"""
    obj = with_id(obj)
    err = reject(obj)
    assert f"'{field}" in err.message
    assert err.id == expected_id(obj)
    assert err.command == obj["type"]


@pytest.mark.parametrize("field", ["id", "agent_id"])
def test_envelope_id_fields_must_be_strings_when_present(field):
    """``id`` and ``agent_id``, when present, are strings: ``null`` is not a string.

    Covers: R5.0.3
    """
    err = reject({"type": "abort", field: None})
    assert f"'{field}'" in err.message


def test_many_errors_are_summarized():
    """Covers: R8.7"""
    err = reject(
        {
            "type": "agent.create",
            "id": "c",
            "cwd": 1,
            "model": 2,
            "provider": 3,
            "mode": 4,
            "tools": 5,
            "skills": 6,
            "name": 7,
        }
    )
    assert "'cwd'" in err.message
    assert "more" in err.message


DELTA = {"type": "message_delta", "message_id": "m", "block_index": 0, "kind": "text"}


@pytest.mark.parametrize(("field", "bad"), [("kind", "image"), ("block_index", "3"), ("message_id", 5)])
def test_wrongly_typed_event_fields_are_rejected(field, bad):
    """Covers: R8.7, R9.4.3"""
    assert parse_event(line(DELTA)).to_wire() == DELTA
    with pytest.raises(FrameError) as info:
        parse_event(line({**DELTA, field: bad}))
    assert f"'{field}'" in info.value.message


def test_unknown_event_type_is_rejected():
    """Covers: R5.0.6"""
    for obj in [{"type": "prompt", "message": "m"}, {"type": "nope"}, {"no_type": 1}, {"type": 5}]:
        with pytest.raises(FrameError):
            parse_event(line(obj))


# --- permission_response ------------------------------------------------------------------------

PERM = {"type": "permission_response", "id": "cmd-7", "request_id": "req-1"}


@pytest.mark.parametrize(
    "form",
    [
        {"choice_id": "allow-once"},
        {"choice_id": "x", "reason": "ok"},
        {"decision": "allow"},
        {"decision": "allow_always"},
        {"decision": "deny", "reason": "no"},
    ],
)
def test_permission_response_accepts_exactly_one_form(form):
    """Covers: R9.5.6, R9.5.7"""
    obj = {**PERM, **form}
    assert parse_command(line(obj)).to_wire() == obj


@pytest.mark.parametrize(
    "form",
    [
        {},
        {"reason": "only a reason"},
        {"choice_id": "c", "decision": "allow"},
        {"choice_id": "c", "decision": None},
        {"choice_id": None, "decision": "deny"},
        {"choice_id": None},
        {"decision": None},
        {"choice_id": ""},
        {"decision": "maybe"},
        {"decision": "ALLOW"},
        {"decision": "persist"},
        {"choice_id": 5},
    ],
)
def test_permission_response_rejects_both_neither_or_bad_values(form):
    """Covers: R9.5.6, R9.5.7, R9.5.4"""
    err = reject({**PERM, **form})
    assert "'choice_id'" in err.message or "'decision'" in err.message
    assert err.id == "cmd-7"
    assert err.command == "permission_response"


# --- session_op ---------------------------------------------------------------------------------

SESSION = {"type": "session_op", "id": "cmd-7"}


@pytest.mark.parametrize(
    ("op", "args", "typed"),
    [
        ("list", None, SessionListArgs),
        ("list", {}, SessionListArgs),
        ("compact", None, CompactArgs),
        ("compact", {}, CompactArgs),
        ("compact", {"keep_recent_tokens": 5}, CompactArgs),
        ("compact", {"keep_recent_tokens": 2**40}, CompactArgs),
        ("fork", {"from_entry_id": "ent-1"}, ForkArgs),
    ],
)
def test_session_op_valid_ops(op, args, typed):
    """Covers: R9.2.43, R9.2.51, R9.2.67"""
    obj = {**SESSION, "op": op}
    if args is not None:
        obj["args"] = args
    command = parse_command(line(obj))
    assert isinstance(command, SessionOp)
    assert type(command.typed_args) is typed
    assert command.to_wire() == obj
    if op == "compact" and args:
        assert command.typed_args.keep_recent_tokens == args["keep_recent_tokens"]
    if op == "fork":
        assert command.typed_args.from_entry_id == "ent-1"


@pytest.mark.parametrize("op", ["branch", "rewind", "delete", "", "LIST", None, 1])
def test_session_op_rejects_removed_and_unknown_ops(op):
    """Covers: R9.2.43, R9.2.44"""
    err = reject({**SESSION, "op": op, "args": {"from_entry_id": "ent-1"}})
    assert "'op'" in err.message
    assert err.id == "cmd-7"
    assert err.command == "session_op"


@pytest.mark.parametrize("value", [0, -1, 1.5, "5", True, False, [5], {"n": 5}, None])
def test_compact_keep_recent_tokens_must_be_a_positive_integer(value):
    """Covers: R9.2.51"""
    err = reject({**SESSION, "op": "compact", "args": {"keep_recent_tokens": value}})
    assert "keep_recent_tokens" in err.message
    assert err.id == "cmd-7"
    assert err.command == "session_op"


@pytest.mark.parametrize(
    "args",
    [None, {}, {"from_entry_id": ""}, {"from_entry_id": None}, {"from_entry_id": 5}, {"entry_id": "ent-1"}],
)
def test_fork_needs_a_non_empty_from_entry_id(args):
    """Covers: R9.2.67"""
    obj = {**SESSION, "op": "fork"}
    if args is not None:
        obj["args"] = args
    err = reject(obj)
    assert "from_entry_id" in err.message
    assert err.id == "cmd-7"
    assert err.command == "session_op"


def test_session_op_args_must_be_an_object():
    """Covers: R9.2.43"""
    err = reject({**SESSION, "op": "list", "args": ["x"]})
    assert "'args'" in err.message


# --- subagent.create ----------------------------------------------------------------------------

SUB = {"type": "subagent.create", "id": "cmd-7", "parent_agent_id": "agent-p"}
TASK = {"name": "scout", "task": "look"}


@pytest.mark.parametrize(
    "form",
    [
        {"name": "scout", "task": "look"},
        {"name": "scout", "task": "look", "strategy": "single", "model": "p/m"},
        {"tasks": [TASK], "strategy": "single"},
        {"tasks": [TASK, {"name": "b", "task": "c"}], "strategy": "parallel"},
        {"tasks": [TASK], "strategy": "chain", "provider": "p", "mode": "build"},
    ],
)
def test_subagent_create_valid_forms(form):
    """Covers: R10.3.12, R10.3.13"""
    obj = {**SUB, **form}
    command = parse_command(line(obj), orchestrator=True)
    assert isinstance(command, SubagentCreate)
    assert command.to_wire() == obj


@pytest.mark.parametrize(
    ("form", "named"),
    [
        ({}, "tasks"),
        ({"strategy": "parallel"}, "tasks"),
        ({"name": "scout"}, "task"),
        ({"task": "look"}, "name"),
        ({"tasks": [TASK]}, "strategy"),
        ({"tasks": []}, "tasks"),
        ({"tasks": [], "strategy": "parallel"}, "tasks"),
        ({"tasks": [{"name": "only"}], "strategy": "parallel"}, "tasks.0.task"),
        ({"tasks": [TASK], "strategy": "fanout"}, "strategy"),
        ({"name": "scout", "task": "look", "tasks": [TASK], "strategy": "chain"}, "tasks"),
    ],
)
def test_subagent_create_form_rules(form, named):
    """Covers: R10.3.12, R10.3.13, R10.3.15"""
    err = reject({**SUB, **form})
    assert named in err.message
    assert err.id == "cmd-7"
    assert err.command == "subagent.create"


def test_subagent_create_needs_parent_agent_id():
    """Covers: R10.3.12"""
    err = reject({"type": "subagent.create", "id": "cmd-7", **TASK})
    assert "'parent_agent_id'" in err.message


# --- oversized records and the error response ---------------------------------------------------


def oversized_from(raw: bytes, cap: int = 64) -> Oversized:
    [record] = LineBuffer(cap).feed(raw + b"\n")
    assert isinstance(record, Oversized)
    return record


def test_oversized_record_is_invalid_request_with_envelope():
    """Covers: R8.5, R2.3.2"""
    raw = b'{"id":"cmd-9","type":"prompt","message":"' + b"x" * 5000 + b'"}'
    err = reject(oversized_from(raw), orchestrator=False)
    assert err.id == "cmd-9"
    assert err.command == "prompt"
    assert str(len(raw)) in err.message


def test_oversized_record_without_readable_envelope():
    """Covers: R8.5"""
    raw = b'{"message":"' + b"x" * 9000 + b'","id":"late","type":"prompt"}'
    err = reject(oversized_from(raw))
    assert err.id is None
    assert err.command is None


def test_bad_line_becomes_a_correlated_error_response():
    """Covers: R8.1, R8.3, R9.3.1, R5.1.2"""
    err = reject({"type": "set_mode", "id": "cmd-3"})
    response = error_response(err, id=err.id, command=err.command)
    wire = response.to_wire()
    assert wire == {
        "type": "response",
        "id": "cmd-3",
        "command": "set_mode",
        "success": False,
        "error": {"code": "INVALID_REQUEST", "message": err.message},
    }
    assert orjson.loads(response.to_json()) == wire
    assert parse_event(response.to_json()).to_wire() == wire


def test_unreadable_line_error_response_has_no_id():
    """Covers: R8.1, R8.6, R9.3.1"""
    err = reject(b"{oops")
    wire = error_response(err, id=err.id, command=err.command).to_wire()
    assert wire["type"] == "response"
    assert wire["success"] is False
    assert wire["error"]["code"] == "INVALID_REQUEST"
    assert "id" not in wire
    assert "command" not in wire


# --- orchestrator enums -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", HEADLESS_POLICIES)
def test_agent_create_headless_policies(policy):
    """Covers: R10.1.5"""
    obj = {"type": "agent.create", "id": "c", "cwd": "/w", "headless_policy": policy}
    assert parse_command(line(obj), orchestrator=True).to_wire() == obj


@pytest.mark.parametrize("policy", ["allow", "ask", "Queue", "", ["deny"]])
def test_agent_create_rejects_other_headless_policies(policy):
    """Covers: R10.1.5"""
    err = reject({"type": "agent.create", "id": "c", "cwd": "/w", "headless_policy": policy})
    assert "'headless_policy'" in err.message


@pytest.mark.parametrize("role", ["interactive", "observer"])
def test_agent_attach_roles(role):
    """Covers: R10.1.19"""
    obj = {"type": "agent.attach", "id": "c", "agent_id": "agent-1", "role": role}
    assert parse_command(line(obj), orchestrator=True).to_wire() == obj


@pytest.mark.parametrize("role", ["admin", "viewer", "Observer", "", 1])
def test_agent_attach_rejects_other_roles(role):
    """Covers: R10.1.19"""
    err = reject({"type": "agent.attach", "id": "c", "agent_id": "agent-1", "role": role})
    assert "'role'" in err.message


def test_the_strictness_order_ranks_every_headless_policy_once():
    """A child's headless policy is chosen by this order (``daemon/jobs/children.py``): a policy it
    left out would let a child loosen its parent's."""
    from shard.protocol.headless import BY_STRICTNESS

    assert sorted(BY_STRICTNESS) == sorted(HEADLESS_POLICIES)
    assert BY_STRICTNESS[0] == "deny"

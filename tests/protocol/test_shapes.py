"""Shapes of the shared types (PROTOCOL §11, §11.2), of the events (§9.1 to §9.5, §10.2, §10.3), of the
error model (§8) and of the ids (DESIGN §6)."""

from __future__ import annotations

import itertools
import re
from typing import Any, Literal, get_args, get_origin

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from shard._version import PROTOCOL_VERSION
from shard.protocol import agents, content, events, ids, jobs, permissions, render, results
from shard.protocol.codec import error_response, parse_command, parse_event
from shard.protocol.errors import ErrorCode, FrameError, ShardError

MD = {"id": "prov/model-1", "provider": "prov", "model": "model-1"}
INFO = {"agent_id": "agent-1", "cwd": "/w", "status": "idle", "runtime_state": "running", "created_at": 1.5}


def ok(model: type[BaseModel], obj: dict[str, Any]) -> dict[str, Any]:
    """Validate ``obj`` as ``model`` and return its wire form, which must equal the input."""
    wire = model.model_validate(obj).to_wire()
    assert wire == obj
    assert orjson.loads(orjson.dumps(wire)) == obj
    return wire


def bad(model: type[BaseModel], obj: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        model.model_validate(obj)
    return info.value


def ev(obj: dict[str, Any]) -> dict[str, Any]:
    """Parse an event line and return its wire form, which must equal the input."""
    wire = parse_event(orjson.dumps(obj)).to_wire()
    assert wire == obj
    return wire


def ev_bad(obj: dict[str, Any]) -> FrameError:
    with pytest.raises(FrameError) as info:
        parse_event(orjson.dumps(obj))
    assert info.value.code is ErrorCode.INVALID_REQUEST
    return info.value


def literal_values(alias: Any) -> set[str]:
    return set(get_args(alias))


def field_literal(model: type[BaseModel], field: str) -> set[Any]:
    """The values of a ``Literal[...]`` or ``Literal[...] | None`` field."""
    annotation = model.model_fields[field].annotation
    members = [annotation] if get_origin(annotation) is Literal else list(get_args(annotation))
    values: set[Any] = set()
    for member in members:
        if get_origin(member) is Literal:
            values |= set(get_args(member))
    assert values, f"{model.__name__}.{field} is not a Literal field"
    return values


def fields_of(model: type[BaseModel]) -> tuple[set[str], set[str]]:
    """(all declared wire fields, required ones). A tag with a constant default counts as required."""
    schema = model.model_json_schema()
    props = schema["properties"]
    required = set(schema.get("required", []))
    required |= {name for name, p in props.items() if "const" in p}
    return set(props), required


# --- §11 shared types -----------------------------------------------------------------------------


def test_image_shape():
    """Covers: R11.0.1"""
    ok(content.Image, {"type": "image", "data": "aGVsbG8=", "mime_type": "image/png"})
    for missing in ("data", "mime_type"):
        obj = {"type": "image", "data": "aGVsbG8=", "mime_type": "image/png"}
        del obj[missing]
        bad(content.Image, obj)
    bad(content.Image, {"type": "picture", "data": "x", "mime_type": "image/png"})
    bad(content.Image, {"type": "image", "data": 5, "mime_type": "image/png"})
    assert fields_of(content.Image) == ({"type", "data", "mime_type"}, {"type", "data", "mime_type"})


def test_model_descriptor_shape():
    """Covers: R11.0.2"""
    ok(agents.ModelDescriptor, MD)
    ok(agents.ModelDescriptor, {**MD, "context_window": 200000})
    for missing in ("id", "provider", "model"):
        bad(agents.ModelDescriptor, {k: v for k, v in MD.items() if k != missing})
    bad(agents.ModelDescriptor, {**MD, "context_window": "big"})
    for source in ("config", "builtin", "server", "default"):  # additive: where the window came from
        ok(agents.ModelDescriptor, {**MD, "context_window": 8192, "context_window_source": source})
    bad(agents.ModelDescriptor, {**MD, "context_window": 8192, "context_window_source": "guessed"})
    assert fields_of(agents.ModelDescriptor) == (
        {"id", "provider", "model", "context_window", "context_window_source"},
        {"id", "provider", "model"},
    )


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_message_roles_allowed(role):
    """Covers: R11.0.3"""
    ok(content.Message, {"id": "msg-1", "role": role, "content": []})


@pytest.mark.parametrize("role", ["system", "tool", "developer", "User", "", None])
def test_message_roles_rejected(role):
    """Covers: R11.0.3"""
    bad(content.Message, {"id": "msg-1", "role": role, "content": []})


def test_message_requires_id_role_content():
    """Covers: R11.0.3"""
    full = {"id": "msg-1", "role": "user", "content": [{"type": "text", "text": "hi"}]}
    ok(content.Message, full)
    for missing in full:
        bad(content.Message, {k: v for k, v in full.items() if k != missing})


CONTENT_BLOCKS = [
    {"type": "text", "text": "hello"},
    {"type": "thinking", "text": "hmm"},
    {"type": "tool_call", "id": "tc-1", "name": "read", "args": {"path": "a.py", "n": [1]}},
    {"type": "tool_call", "id": "tc-2", "name": "ls", "args": {}},
    {"type": "tool_result", "tool_call_id": "tc-1", "content": {"kind": "text", "text": "body"}},
    {"type": "tool_result", "tool_call_id": "tc-1", "content": {"kind": "json", "value": [1, {"a": None}]}},
    {
        "type": "tool_result",
        "tool_call_id": "tc-1",
        "content": {"kind": "error", "message": "no"},
        "is_error": True,
    },
]


@pytest.mark.parametrize("block", CONTENT_BLOCKS, ids=lambda b: b["type"])
def test_each_content_block_kind(block):
    """Covers: R11.0.4, R11.0.5"""
    ok(content.Message, {"id": "msg-1", "role": "assistant", "content": [block]})


@pytest.mark.parametrize(
    "block",
    [
        {"type": "text"},
        {"type": "thinking", "text": 1},
        {"type": "tool_call", "id": "tc-1", "name": "read"},
        {"type": "tool_call", "id": "tc-1", "name": "read", "args": []},
        {"type": "tool_call", "id": "tc-1", "name": "read", "args": "{}"},
        {"type": "tool_result", "tool_call_id": "tc-1"},
        {"type": "tool_result", "tool_call_id": "tc-1", "content": "text"},
        {
            "type": "tool_result",
            "tool_call_id": "tc-1",
            "content": {"kind": "text", "text": "x"},
            "is_error": "nope",
        },
        {"type": "redacted_thinking", "data": "x"},
        {"text": "no type"},
    ],
)
def test_malformed_content_blocks_rejected(block):
    """Covers: R11.0.4"""
    bad(content.Message, {"id": "msg-1", "role": "assistant", "content": [block]})


TOOL_RESULT_CONTENT = [
    {"kind": "text", "text": "out"},
    {"kind": "json", "value": {"rows": [1, 2]}},
    {"kind": "json", "value": None},
    {"kind": "error", "message": "failed"},
]


@pytest.mark.parametrize("value", TOOL_RESULT_CONTENT, ids=lambda c: c["kind"])
def test_tool_result_content_kinds(value):
    """Covers: R11.0.5, R9.4.14"""
    ev(
        {
            "type": "tool_result",
            "tool_call_id": "tc-1",
            "content": value,
            "is_error": value["kind"] == "error",
        }
    )


@pytest.mark.parametrize(
    "value",
    [
        {"kind": "image", "data": "x"},
        {"kind": "text"},
        {"kind": "text", "text": 5},
        {"kind": "error"},
        {"kind": "error", "text": "wrong field"},
        {"text": "no kind"},
    ],
)
def test_tool_result_content_rejects_other_shapes(value):
    """Covers: R11.0.5"""
    ev_bad({"type": "tool_result", "tool_call_id": "tc-1", "content": value, "is_error": False})


RENDERS = [
    {"kind": "text", "text": "plain"},
    {"kind": "kv", "pairs": [{"k": "path", "v": "a.py"}, {"k": "lines", "v": "3"}]},
    {"kind": "kv", "pairs": []},
    {
        "kind": "diff",
        "path": "a.py",
        "hunks": [
            {
                "old_start": 1,
                "old_lines": 2,
                "new_start": 1,
                "new_lines": 3,
                "lines": [" a", "-b", "+c", "+d"],
            }
        ],
    },
    {
        "kind": "tree",
        "root": {
            "label": "src",
            "kind": "dir",
            "children": [{"label": "a.py", "kind": "file"}, {"label": "pkg", "kind": "dir", "children": []}],
        },
    },
    {"kind": "tree", "root": {"label": "only"}},
    {"kind": "progress", "label": "indexing", "current": 3},
    {"kind": "progress", "label": "indexing", "current": 3.5, "total": 10},
    {"kind": "status", "label": "ok", "tone": "info"},
    {"kind": "status", "label": "careful", "tone": "warn"},
    {"kind": "status", "label": "broke", "tone": "error"},
    {"kind": "command", "command": "ls -la"},
    {"kind": "command", "command": "false", "exitCode": 1, "durationMs": 12.5},
    {
        "kind": "path_list",
        "paths": [{"path": "a.py", "kind": "file", "hint": "def f():"}, {"path": "b", "kind": "dir"}],
    },
    {"kind": "code", "text": "print(1)\n"},
    {"kind": "code", "path": "a.py", "lang": "python", "text": "print(1)\n"},
]


def test_render_examples_cover_every_kind():
    """Covers: R11.0.6"""
    kinds = {
        get_args(m.model_fields["kind"].annotation)[0] for m in get_args(get_args(render.RenderDescriptor)[0])
    }
    assert kinds == {"text", "kv", "diff", "tree", "progress", "status", "command", "path_list", "code"}
    assert {r["kind"] for r in RENDERS} == kinds


@pytest.mark.parametrize("descriptor", RENDERS, ids=lambda r: r["kind"])
@pytest.mark.parametrize("carrier", ["tool_call", "tool_result"])
def test_render_descriptor_kinds(descriptor, carrier):
    """Covers: R11.0.6, R11.0.7, R11.0.8, R11.0.9, R11.0.10, R11.0.11, R11.0.12"""
    if carrier == "tool_call":
        ev({"type": "tool_call", "tool_call_id": "tc-1", "name": "x", "args": {}, "render": descriptor})
    else:
        ev(
            {
                "type": "tool_result",
                "tool_call_id": "tc-1",
                "content": {"kind": "text", "text": ""},
                "is_error": False,
                "render": descriptor,
            }
        )


@pytest.mark.parametrize(
    "descriptor",
    [
        {"kind": "text"},
        {"kind": "kv", "pairs": [{"k": "a"}]},
        {"kind": "kv", "pairs": {"a": "b"}},
        {"kind": "diff", "path": "a.py"},
        {
            "kind": "diff",
            "path": "a.py",
            "hunks": [{"old_start": 1, "old_lines": 1, "new_start": 1, "new_lines": 1}],
        },
        {"kind": "tree", "root": {"kind": "dir"}},
        {"kind": "tree", "root": {"label": "x", "kind": "symlink"}},
        {"kind": "progress", "label": "x"},
        {"kind": "progress", "label": "x", "current": "three"},
        {"kind": "status", "label": "x", "tone": "warning"},
        {"kind": "status", "label": "x", "tone": "success"},
        {"kind": "status", "label": "x"},
        {"kind": "command"},
        {"kind": "path_list", "paths": [{"path": "a", "kind": "symlink"}]},
        {"kind": "path_list", "paths": [{"path": "a"}]},
        {"kind": "code", "path": "a.py"},
        {"kind": "markdown", "text": "x"},
    ],
)
def test_render_descriptor_rejects_bad_shapes(descriptor):
    """Covers: R11.0.6, R11.0.7, R11.0.8, R11.0.9, R11.0.10, R11.0.11, R11.0.12"""
    ev_bad({"type": "tool_call", "tool_call_id": "tc-1", "name": "x", "args": {}, "render": descriptor})


def test_status_tones_are_exactly_three():
    """Covers: R11.0.9"""
    assert field_literal(render.StatusRender, "tone") == {"info", "warn", "error"}


def test_command_descriptor_uses_camel_case_on_the_wire():
    """Covers: R11.0.10"""
    wire = render.CommandRender(command="make", exitCode=2, durationMs=1500).to_wire()
    assert wire == {"kind": "command", "command": "make", "exitCode": 2, "durationMs": 1500}
    snake = render.CommandRender.model_validate({"kind": "command", "command": "make", "exit_code": 2})
    assert snake.exitCode is None  # snake_case is not an alias of the camelCase field
    assert "exitCode" not in snake.to_wire()


def test_path_list_kinds_are_file_and_dir():
    """Covers: R11.0.11"""
    assert field_literal(render.PathEntry, "kind") == {"file", "dir"}
    assert field_literal(render.TreeNode, "kind") == {"file", "dir"}


def test_usage_shape():
    """Covers: R11.0.18, R9.4.18"""
    ok(agents.Usage, {"input": 10, "output": 2})
    full = {
        "input": 10,
        "output": 2,
        "cache_read": 1,
        "cache_write": 0,
        "cost": 0.0125,
        "context_tokens": 9000,
        "model": "prov/model-1",
    }
    ok(agents.Usage, full)
    bad(agents.Usage, {"input": 10})
    bad(agents.Usage, {"output": 10})
    assert fields_of(agents.Usage) == (set(full), {"input", "output"})
    ev({"type": "usage", **full})
    ev({"type": "turn_end", "turn_id": "turn-1", "usage": full})


def test_agent_info_shape():
    """Covers: R11.0.19"""
    ok(agents.AgentInfo, INFO)
    full = {
        **INFO,
        "name": "n",
        "model": "p/m",
        "provider": "p",
        "mode": "build",
        "usage": {"input": 1, "output": 2},
        "parent_agent_id": "agent-0",
        "alias": "scout",
        "definition_name": "d",
        "display_name": "d · scout",
        "session_id": "sess-0",  # additive (Shard): the session the agent runs on
        "host": "box",  # additive (Shard): the [[hosts]] machine it runs on
        "workspace_id": "ws-0",  # additive (Shard): the workspace it was made in
    }
    ok(agents.AgentInfo, full)
    assert fields_of(agents.AgentInfo) == (
        set(full),
        {"agent_id", "cwd", "status", "runtime_state", "created_at"},
    )
    for missing in INFO:
        bad(agents.AgentInfo, {k: v for k, v in INFO.items() if k != missing})
    bad(agents.AgentInfo, {**INFO, "status": "busy"})
    bad(agents.AgentInfo, {**INFO, "runtime_state": "dead"})


def test_agent_status_is_exactly_six_values():
    """Covers: R9.1.20"""
    expected = {"idle", "streaming", "waiting_for_permission", "waiting_for_ui", "compacting", "error"}
    assert literal_values(agents.AgentStatus) == expected
    assert set(agents.AGENT_STATUSES) == expected
    assert len(agents.AGENT_STATUSES) == 6
    for status in expected:
        ev({"type": "status", "status": status})
    for wrong in ("busy", "running", "waiting", "Idle", ""):
        ev_bad({"type": "status", "status": wrong})


def test_runtime_state_values():
    """RuntimeState is pinned by DESIGN §6.

    Covers: R10.2.13, R11.0.19
    """
    assert literal_values(agents.RuntimeState) == {"starting", "running", "stopping", "stopped", "failed"}


def test_job_run_and_strategy_values():
    """Covers: R11.2.3, R11.2.4, R11.2.5, R10.3.13"""
    assert literal_values(jobs.JobState) == {"queued", "running", "completed", "failed", "cancelled"}
    assert literal_values(jobs.RunState) == {
        "queued",
        "starting",
        "active",
        "completed",
        "failed",
        "timed_out",
        "cancelled",
        "interrupted",
    }
    assert literal_values(jobs.JobStrategy) == {"single", "parallel", "chain"}
    assert set(jobs.TERMINAL_RUN_STATES) == {"completed", "failed", "timed_out", "cancelled", "interrupted"}


RUN = {"job_id": "job-1", "run_id": "run-1", "index": 0, "name": "scout", "state": "queued"}
RUN_FULL = {
    **RUN,
    "agent_id": "agent-2",
    "alias": "scout",
    "definition_name": "d",
    "display_name": "d · scout",
    "state": "completed",
    "deadline": 99.5,
    "final_text": "done",
    "usage": {"input": 1, "output": 2},
    "error": "e",
    "started_at": 1,
    "ended_at": 2,
}
JOB = {
    "job_id": "job-1",
    "parent_agent_id": "agent-p",
    "strategy": "single",
    "state": "queued",
    "runs": [RUN],
    "created_at": 1.0,
}


def test_run_snapshot_shape():
    """Covers: R11.2.6"""
    ok(jobs.RunSnapshot, RUN)
    ok(jobs.RunSnapshot, RUN_FULL)
    assert fields_of(jobs.RunSnapshot) == (set(RUN_FULL), set(RUN))
    for missing in RUN:
        bad(jobs.RunSnapshot, {k: v for k, v in RUN.items() if k != missing})
    bad(jobs.RunSnapshot, {**RUN, "state": "running"})
    bad(jobs.RunSnapshot, {**RUN, "usage": {"input": 1}})
    assert "task" not in fields_of(jobs.RunSnapshot)[0]


def test_job_snapshot_shape():
    """Covers: R11.2.8"""
    ok(jobs.JobSnapshot, JOB)
    full = {
        **JOB,
        "runs": [RUN, RUN_FULL],
        "chain_step": 1,
        "stopped_at": 3,
        "ended_at": 4,
        "state": "cancelled",
        "strategy": "chain",
    }
    ok(jobs.JobSnapshot, full)
    assert fields_of(jobs.JobSnapshot) == (set(full), set(JOB))
    for missing in JOB:
        bad(jobs.JobSnapshot, {k: v for k, v in JOB.items() if k != missing})
    bad(jobs.JobSnapshot, {**JOB, "state": "active"})
    bad(jobs.JobSnapshot, {**JOB, "strategy": "serial"})
    assert not {"task", "tasks", "task_specs"} & fields_of(jobs.JobSnapshot)[0]


# --- §9.5 permission / UI ---------------------------------------------------------------------------

PERM_REQ = {
    "type": "permission_request",
    "request_id": "req-1",
    "tool_name": "bash",
    "input": {"command": "ls"},
    "prompt": "Run ls?",
    "options": ["allow", "allow_always", "deny"],
}


def test_permission_request_shape():
    """Covers: R9.5.1, R9.5.2, R9.5.3"""
    ev(PERM_REQ)
    ev(
        {
            **PERM_REQ,
            "agent_id": "agent-1",
            "options": ["deny"],
            "details": [{"value": "ls"}, {"label": "cmd", "value": "ls -la", "format": "command"}],
            "choices": [
                {"id": "once", "label": "Allow once", "intent": "allow"},
                {
                    "id": "always",
                    "label": "Always",
                    "description": "d",
                    "accelerator": "a",
                    "intent": "persist",
                },
                {"id": "no", "label": "Deny", "intent": "deny"},
            ],
        }
    )
    assert fields_of(events.PermissionRequest) == (
        {
            "type",
            "agent_id",
            "request_id",
            "tool_name",
            "input",
            "prompt",
            "options",
            "details",
            "choices",
            "tool_call_id",
        },  # additive (issue 26): the call a client shows the answer on
        {"type", "request_id", "tool_name", "input", "prompt", "options"},
    )


@pytest.mark.parametrize(
    "change",
    [
        {"options": ["allow", "persist"]},
        {"options": "allow"},
        {"details": [{"label": "x"}]},
        {"details": [{"value": "v", "format": "markdown"}]},
        {"choices": [{"id": "", "label": "x", "intent": "allow"}]},
        {"choices": [{"label": "x", "intent": "allow"}]},
        {"choices": [{"id": "a", "intent": "allow"}]},
        {"choices": [{"id": "a", "label": "x", "intent": "allow_always"}]},
        {"choices": [{"id": "a", "label": "x"}]},
        {"prompt": None},
    ],
)
def test_permission_request_rejects_bad_presentation(change):
    """Covers: R9.5.1, R9.5.2, R9.5.3, R9.5.4"""
    ev_bad({**PERM_REQ, **change})


def test_permission_presentation_enums():
    """Covers: R9.5.1, R9.5.2, R9.5.3, R9.5.7"""
    assert literal_values(permissions.Decision) == {"allow", "allow_always", "deny"}
    assert field_literal(permissions.PermissionDetail, "format") == {"text", "command", "path", "code"}
    assert field_literal(permissions.PermissionChoice, "intent") == {"allow", "persist", "deny"}


def test_permission_choice_id_non_empty():
    """Covers: R9.5.4"""
    bad(permissions.PermissionChoice, {"id": "", "label": "x", "intent": "allow"})
    ok(permissions.PermissionChoice, {"id": "c", "label": "x", "intent": "allow"})


UI_REQ = {"type": "ui_request", "request_id": "req-2", "kind": "select"}


@pytest.mark.parametrize("kind", ["select", "confirm", "input", "editor", "notify"])
def test_ui_request_kinds(kind):
    """Covers: R9.5.19"""
    ev({**UI_REQ, "kind": kind})


def test_ui_request_full_shape_and_notify_types():
    """Covers: R9.5.19"""
    assert field_literal(events.UiRequest, "kind") == {"select", "confirm", "input", "editor", "notify"}
    assert field_literal(events.UiRequest, "notify_type") == {"info", "warning", "error"}
    for notify_type in ("info", "warning", "error"):
        ev(
            {
                **UI_REQ,
                "agent_id": "agent-1",
                "kind": "notify",
                "title": "t",
                "message": "m",
                "options": ["a", "b"],
                "placeholder": "p",
                "prefill": "f",
                "notify_type": notify_type,
            }
        )
    for wrong in (
        {"kind": "prompt"},
        {"kind": "notify", "notify_type": "warn"},
        {"options": "a"},
        {"title": 1},
    ):
        ev_bad({**UI_REQ, **wrong})


@pytest.mark.parametrize("value", ["yes", "", ["a", "b"], [], None])
def test_ui_response_value_forms(value):
    """Covers: R9.5.21"""
    obj = {"type": "ui_response", "request_id": "req-2", "value": value}
    assert parse_command(orjson.dumps(obj)).to_wire() == obj


@pytest.mark.parametrize("value", [5, 1.5, True, {"a": "b"}, [1], ["a", None]])
def test_ui_response_value_rejects_other_json(value):
    """Covers: R9.5.21"""
    with pytest.raises(FrameError) as info:
        parse_command(orjson.dumps({"type": "ui_response", "request_id": "req-2", "value": value}))
    assert "'value" in info.value.message


@pytest.mark.parametrize("value", ["x", ["a"], None, 5, {"any": "thing"}])
def test_ui_resolved_carries_any_value(value):
    """Covers: R9.5.22"""
    ev({"type": "ui_resolved", "request_id": "req-2", "value": value})
    ev_bad({"type": "ui_resolved", "value": value})


@pytest.mark.parametrize(
    "form",
    [
        {"decision": "allow"},
        {"decision": "deny", "source": "headless"},
        {"choice_id": "c1"},
        {"choice_id": "c1", "source": "web"},
    ],
)
def test_permission_resolved_forms(form):
    """Covers: R9.5.13"""
    ev({"type": "permission_resolved", "request_id": "req-1", **form})


@pytest.mark.parametrize(
    "form",
    [
        {},
        {"source": "web"},
        {"decision": "allow", "choice_id": "c1"},
        {"decision": "maybe"},
        {"decision": None},
        {"choice_id": None},
        {"decision": None, "choice_id": "c1"},
    ],
)
def test_permission_resolved_needs_exactly_one_form(form):
    """Exactly one of ``decision`` (a Decision) or ``choice_id`` (a string): ``null`` is neither.

    Covers: R9.5.13
    """
    ev_bad({"type": "permission_resolved", "request_id": "req-1", **form})


# --- §9.1 lifecycle, §9.3 response, §9.4 streaming ------------------------------------------------


def test_protocol_version_is_semver_0_1_0():
    """Covers: R7.1, R9.1.1"""
    assert re.fullmatch(r"\d+\.\d+\.\d+", PROTOCOL_VERSION)
    assert PROTOCOL_VERSION == "0.1.0"


def test_hello_shape():
    """Covers: R9.1.1, R7.1"""
    hello = {
        "type": "hello",
        "protocol_version": "0.1.0",
        "server_version": "0.1.0.dev0",
        "capabilities": ["x"],
    }
    ev(hello)
    for missing in ("protocol_version", "server_version", "capabilities"):
        ev_bad({k: v for k, v in hello.items() if k != missing})
    ev_bad({**hello, "capabilities": "streaming-deltas"})
    ev({**hello, "client_id": "unix-client-3"})  # additive (Shard): the daemon names the connection
    assert fields_of(events.Hello) == (set(hello) | {"client_id"}, set(hello))


SYNC = {
    "type": "sync",
    "status": "idle",
    "mode": "build",
    "live_window": {"messages": []},
    "pending_requests": [],
}


def test_sync_shape():
    """Covers: R9.1.4, R9.1.13"""
    ev(SYNC)
    ev(
        {
            **SYNC,
            "agent_id": "agent-1",
            "status": "waiting_for_permission",
            "capabilities": ["mode-switch"],
            "runtime_epoch": 0,
            "live_window": {
                "messages": [{"id": "msg-1", "role": "user", "content": [{"type": "text", "text": "hi"}]}],
                "compaction_index": 2,
            },
            "pending_requests": [PERM_REQ, UI_REQ],
        }
    )
    for missing in ("status", "mode", "live_window", "pending_requests"):
        ev_bad({k: v for k, v in SYNC.items() if k != missing})
    ev_bad({**SYNC, "live_window": {}})
    ev_bad({**SYNC, "pending_requests": [{"type": "status", "status": "idle"}]})
    ev_bad({**SYNC, "runtime_epoch": -1})
    ev_bad({**SYNC, "status": "busy"})


def test_queue_shapes():
    """The additive queue: ``queue_changed`` carries the whole queue and a free-form ``reason``
    (a newer server's reason must not break a client), ``returned`` what was handed back; ``sync``
    may carry ``queue``; ``unqueue`` names one ``queue_id``.

    Covers: R5.0.3, R9.1.4
    """
    item = {"queue_id": "queue-1", "message": "hi", "behavior": "steer", "queued_at": 1.5}
    ev({"type": "queue_changed", "queue": [item], "reason": "queued"})
    ev({"type": "queue_changed", "agent_id": "agent-1", "queue": [], "reason": "aborted", "returned": [item]})
    ev({"type": "queue_changed", "queue": [], "reason": "some-later-reason"})
    ev(
        {
            "type": "queue_changed",
            "queue": [
                {
                    **item,
                    "images": [{"type": "image", "data": "aGk=", "mime_type": "image/png"}],
                    "source": "unix-client-1",
                }
            ],
            "reason": "x",
        }
    )
    ev_bad({"type": "queue_changed", "queue": [item]})
    ev_bad({"type": "queue_changed", "queue": [{**item, "behavior": "later"}], "reason": "queued"})
    ev_bad({"type": "queue_changed", "queue": [{**item, "source": None}], "reason": "queued"})
    ev({**SYNC, "queue": [item]})
    ev_bad({**SYNC, "queue": None})
    parse_command(b'{"type":"unqueue","queue_id":"queue-1"}')
    with pytest.raises(FrameError):
        parse_command(b'{"type":"unqueue"}')


def test_status_shape():
    """Covers: R9.1.19"""
    ev({"type": "status", "status": "compacting"})
    ev({"type": "status", "agent_id": "agent-1", "status": "error", "detail": "provider down"})
    ev_bad({"type": "status"})
    assert fields_of(events.Status) == ({"type", "agent_id", "status", "detail"}, {"type", "status"})


def test_response_envelope_shape():
    """Covers: R9.3.1, R8.1"""
    ev({"type": "response", "id": "c1", "command": "abort", "success": True})
    ev(
        {
            "type": "response",
            "id": "c1",
            "command": "set_mode",
            "success": True,
            "data": {"previous_mode": "build", "mode": "plan"},
        }
    )
    ev(
        {
            "type": "response",
            "id": "c1",
            "command": "set_mode",
            "success": False,
            "error": {"code": "NOT_FOUND", "message": "no such mode", "data": {"mode": "x"}},
        }
    )
    ev_bad({"type": "response", "id": "c1", "command": "abort"})
    ev_bad({"type": "response", "success": "maybe"})
    ev_bad({"type": "response", "success": False, "error": {"code": "X"}})
    ev_bad({"type": "response", "success": False, "error": "boom"})
    assert fields_of(events.Response)[1] == {"type", "success"}
    assert {"id", "command", "data", "error"} <= fields_of(events.Response)[0]


def test_error_response_is_plain_data():
    """Covers: R8.1, R8.3, R9.3.1"""
    err = ShardError(ErrorCode.CONFLICT, "a turn is in flight", {"kind": "busy"})
    wire = error_response(err, id="c9", command="session_op").to_wire()
    assert wire == {
        "type": "response",
        "id": "c9",
        "command": "session_op",
        "success": False,
        "error": {"code": "CONFLICT", "message": "a turn is in flight", "data": {"kind": "busy"}},
    }
    assert orjson.loads(orjson.dumps(wire)) == wire


def test_message_delta_kinds():
    """Covers: R9.4.3"""
    base = {"type": "message_delta", "message_id": "msg-1", "block_index": 0}
    assert field_literal(events.MessageDelta, "kind") == {"text", "tool_call", "thinking"}
    ev({**base, "kind": "text", "text_delta": "he"})
    ev({**base, "kind": "thinking", "text_delta": "hm"})
    ev({**base, "kind": "tool_call", "tool_call_id": "tc-1", "name": "read"})
    ev({**base, "kind": "tool_call", "args_delta": '{"pa'})
    ev_bad({**base, "kind": "image"})
    ev_bad({"type": "message_delta", "message_id": "msg-1", "kind": "text"})
    ev_bad({"type": "message_delta", "block_index": 0, "kind": "text"})


def test_error_event_shape():
    """Covers: R9.4.23, R8.2"""
    ev({"type": "error", "code": "PROVIDER_ERROR", "message": "down"})
    ev({"type": "error", "code": "SESSION_CORRUPT", "message": "bad", "fatal": True})
    ev_bad({"type": "error", "message": "no code"})
    ev_bad({"type": "error", "code": "X"})
    ev_bad({"type": "error", "code": "X", "message": "m", "fatal": "yes please"})
    assert fields_of(events.ErrorEvent) == (
        {"type", "agent_id", "code", "message", "fatal"},
        {"type", "code", "message"},
    )


# --- §10.2 broadcasts, §10.3 subagent_run_changed ---------------------------------------------------


def test_agent_spawned_shape():
    """Covers: R10.2.11"""
    ev({"type": "agent_spawned", "agent_id": "agent-1", "info": INFO})
    ev_bad({"type": "agent_spawned", "agent_id": "agent-1"})
    ev_bad({"type": "agent_spawned", "info": INFO})
    ev_bad({"type": "agent_spawned", "agent_id": "agent-1", "info": {"agent_id": "agent-1"}})


def test_agent_exited_runtime_state_is_failed():
    """Covers: R10.2.12"""
    ev({"type": "agent_exited", "agent_id": "agent-1", "runtime_state": "failed", "reason": "crashed"})
    ev(
        {
            "type": "agent_exited",
            "agent_id": "agent-1",
            "runtime_state": "failed",
            "reason": "crashed",
            "exit_code": 137,
        }
    )
    for state in ("stopped", "running", "starting", "stopping"):
        ev_bad({"type": "agent_exited", "agent_id": "agent-1", "runtime_state": state, "reason": "x"})
    ev_bad({"type": "agent_exited", "agent_id": "agent-1", "runtime_state": "failed"})


def test_agent_exited_built_by_the_server_writes_runtime_state():
    """The server builds ``AgentExited(agent_id=..., reason=...)``; ``runtime_state: "failed"`` is part
    of the wire shape and must be written even though it has a default.

    Covers: R10.2.12
    """
    wire = events.AgentExited(agent_id="agent-1", reason="crashed").to_wire()
    assert wire == {
        "type": "agent_exited",
        "agent_id": "agent-1",
        "runtime_state": "failed",
        "reason": "crashed",
    }


def test_agent_status_changed_shape():
    """Covers: R10.2.13"""
    base = {
        "type": "agent_status_changed",
        "agent_id": "agent-1",
        "status": "streaming",
        "runtime_state": "running",
    }
    ev(base)
    ev({**base, "detail": "turn 3"})
    for missing in ("agent_id", "status", "runtime_state"):
        ev_bad({k: v for k, v in base.items() if k != missing})
    ev_bad({**base, "runtime_state": "dead"})
    ev_bad({**base, "status": "running"})


PHASES = {"idle", "thinking", "streaming", "tool", "waiting", "compacting", "retrying", "error"}


@pytest.mark.parametrize("phase", sorted(PHASES))
def test_agent_activity_phases(phase):
    """Covers: R10.2.14"""
    ev(
        {
            "type": "agent_activity",
            "agent_id": "agent-1",
            "timestamp": 1.5,
            "phase": phase,
            "status": "streaming",
        }
    )


def test_agent_activity_shape():
    """Covers: R10.2.14, R10.2.16"""
    assert field_literal(events.AgentActivity, "phase") == PHASES
    base = {
        "type": "agent_activity",
        "agent_id": "agent-1",
        "timestamp": 1,
        "phase": "tool",
        "status": "streaming",
    }
    ev({**base, "tool_name": "bash"})
    for wrong in (
        {"phase": "running"},
        {"phase": "waiting_for_ui"},
        {"status": "tool"},
        {"timestamp": "now"},
    ):
        ev_bad({**base, **wrong})
    for missing in ("agent_id", "timestamp", "phase", "status"):
        ev_bad({k: v for k, v in base.items() if k != missing})
    assert fields_of(events.AgentActivity)[0] == {
        "type",
        "agent_id",
        "timestamp",
        "phase",
        "status",
        "tool_name",
    }


def test_subagent_run_changed_shape():
    """Covers: R10.3.62"""
    base = {
        "type": "subagent_run_changed",
        "parent_agent_id": "agent-p",
        "job_id": "job-1",
        "run_id": "run-1",
        "state": "active",
    }
    full = {
        **base,
        "agent_id": "agent-2",
        "alias": "scout",
        "definition_name": "d",
        "display_name": "d · scout",
        "state": "failed",
        "previous_state": "active",
        "error": "boom",
        "ended_at": 5,
    }
    ev(base)
    ev(full)
    assert fields_of(events.SubagentRunChanged) == (set(full), set(base))
    ev_bad({**base, "state": "running"})
    ev_bad({**base, "previous_state": "done"})


def test_model_and_mode_changed_shapes():
    """Covers: R10.2.1, R10.2.5"""
    ev(
        {
            "type": "model_changed",
            "previous": MD,
            "active": MD,
            "effective": "next_provider_call",
            "capabilities": [],
        }
    )
    ev({"type": "mode_changed", "previous_mode": "build", "mode": "plan"})
    ev_bad({"type": "model_changed", "previous": MD, "active": MD, "effective": "now"})
    ev_bad({"type": "mode_changed", "mode": "plan"})


# --- constant fields the server writes ------------------------------------------------------------

CONSTANT_FIELD_CASES = [
    pytest.param(
        lambda: events.AgentExited(agent_id="agent-1", reason="r"),
        {"runtime_state": "failed"},
        id="agent_exited",
    ),
    pytest.param(
        lambda: events.ModelChanged(previous=None, active=agents.ModelDescriptor(**MD)),
        {"effective": "next_provider_call"},
        id="model_changed",
    ),
    pytest.param(
        lambda: events.ReasoningLevelChanged(
            model=agents.ModelDescriptor(**MD), previous="low", active="high"
        ),
        {"effective": "next_provider_call"},
        id="reasoning_level_changed",
    ),
    pytest.param(
        lambda: results.SetModelResult(previous=None, active=agents.ModelDescriptor(**MD)),
        {"effective": "next_provider_call"},
        id="set_model_result",
    ),
    pytest.param(
        lambda: results.ListReasoningLevelsResult(
            model=agents.ModelDescriptor(**MD), levels=[], active="low"
        ),
        {"effective": "next_provider_call"},
        id="list_reasoning_levels_result",
    ),
    pytest.param(
        lambda: results.SetReasoningLevelResult(
            model=agents.ModelDescriptor(**MD), previous="low", active="high"
        ),
        {"effective": "next_provider_call"},
        id="set_reasoning_level_result",
    ),
    pytest.param(
        lambda: results.CompactResult(
            index=0,
            tokens_before=10,
            tokens_after=5,
            first_kept_entry_id="ent-1",
            message_range=["msg-1", "msg-2"],
        ),
        {"compacted": True},
        id="compact_result",
    ),
    pytest.param(
        lambda: results.CompactNoop(), {"compacted": False, "reason": "no_safe_cut"}, id="compact_noop"
    ),
    pytest.param(
        lambda: results.SubagentRunHandle(
            run_id="run-1", index=0, name="n", agent_id="agent-2", alias="scout"
        ),
        {"state": "queued"},
        id="subagent_run_handle",
    ),
    pytest.param(
        lambda: results.SubagentRelaunchResult(
            job_id="job-1", run_id="run-1", agent_id="agent-2", alias="scout"
        ),
        {"state": "queued"},
        id="subagent_relaunch_result",
    ),
]


@pytest.mark.parametrize(("build", "constants"), CONSTANT_FIELD_CASES)
def test_constant_fields_are_written_on_the_wire(build, constants):
    """Fields the protocol fixes to one value are part of the shape; a message built without naming
    them still carries them.

    Covers: R10.2.12, R10.2.1, R9.2.24, R9.2.33, R9.2.34, R9.2.55, R9.2.56, R10.3.20, R10.3.46
    """
    wire = build().to_wire()
    for key, value in constants.items():
        assert wire.get(key, "<absent>") == value, key
    assert orjson.loads(build().to_json()) == wire


def test_tag_fields_are_written_even_when_defaulted():
    """Covers: R5.0.2, R11.0.1, R11.0.6"""
    assert content.Image(data="x", mime_type="image/png").to_wire()["type"] == "image"
    assert render.TextRender(text="t").to_wire() == {"kind": "text", "text": "t"}
    assert content.TextContent(text="t").to_wire() == {"kind": "text", "text": "t"}
    assert events.Status(status="idle").to_wire() == {"type": "status", "status": "idle"}


# --- §8 errors ------------------------------------------------------------------------------------

PROTOCOL_ERROR_CODES = {
    "INVALID_REQUEST",
    "NOT_FOUND",
    "NOT_ATTACHED",
    "PERMISSION_DENIED",
    "PROTOCOL_ERROR",
    "TIMEOUT",
    "RUNTIME_START_FAILED",
    "SESSION_CORRUPT",
    "INTERNAL_ERROR",
    "PROVIDER_ERROR",
    "TOOL_ERROR",
    "CONFLICT",
}


def test_error_code_registry_is_exactly_the_protocol_codes():
    """Covers: R8.4"""
    assert {code.value for code in ErrorCode} == PROTOCOL_ERROR_CODES
    assert {code.name for code in ErrorCode} == PROTOCOL_ERROR_CODES
    assert len(ErrorCode) == 12


@pytest.mark.parametrize("code", sorted(PROTOCOL_ERROR_CODES))
def test_shard_error_to_wire_is_plain_data(code):
    """Covers: R8.3, R5.0.1"""
    err = ShardError(code, "something went wrong")
    wire = err.to_wire()
    assert wire == {"code": code, "message": "something went wrong"}
    assert type(wire["code"]) is str
    assert orjson.loads(orjson.dumps(wire)) == wire
    with_data = ShardError(ErrorCode(code), "m", {"k": [1, None]}).to_wire()
    assert with_data == {"code": code, "message": "m", "data": {"k": [1, None]}}


def test_shard_error_rejects_unknown_code():
    """Covers: R8.4"""
    with pytest.raises(ValueError, match="NOT_A_CODE"):
        ShardError("NOT_A_CODE", "m")


def test_frame_error_is_invalid_request():
    """Covers: R8.5, R8.3"""
    err = FrameError("bad", id="c1", command="prompt")
    assert isinstance(err, ShardError)
    assert err.code is ErrorCode.INVALID_REQUEST
    assert err.to_wire() == {"code": "INVALID_REQUEST", "message": "bad"}
    assert (err.id, err.command) == ("c1", "prompt")


# --- ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["agent", "sess", "job", "run", "ws", "req", "tc", "msg", "turn"])
def test_new_id_is_prefixed_hex(prefix):
    """Covers: R11.2.1"""
    value = ids.new_id(prefix)
    assert re.fullmatch(rf"{prefix}-[0-9a-f]{{16}}", value)


def test_new_id_is_random():
    """Covers: R11.2.1, R11.2.2"""
    drawn = [ids.new_id("run") for _ in range(1000)]
    assert len(set(drawn)) == 1000
    suffixes = sorted(int(d.split("-", 1)[1], 16) for d in drawn)
    gaps = {b - a for a, b in itertools.pairwise(suffixes)}
    assert len(gaps) > 100  # not a counter


@pytest.mark.parametrize("prefix", ["", "x", "session", "Agent", "job-", "../", "agent/"])
def test_new_id_rejects_unknown_prefix(prefix):
    """Covers: R11.2.1"""
    with pytest.raises(ValueError, match="prefix"):
        ids.new_id(prefix)


def test_is_session_id_accepts_generated_ids():
    """Covers: R10.1.10"""
    for _ in range(50):
        assert ids.is_session_id(ids.new_id("sess"))
    assert ids.is_session_id("sess-abc_DEF-123")


@pytest.mark.parametrize(
    "value",
    [
        "",
        "sess-",
        "sess-../x",
        "sess-a/b",
        "sess-a\\b",
        "../",
        "..",
        "sess-..",
        "sess-.",
        "sess-a b",
        "sess-a\x00",
        "sess-é",
        "agent-0123456789abcdef",
        "SESS-abc",
        "xsess-abc",
        "/sess-abc",
        "sess-" + "a" * 200,
    ],
)
def test_is_session_id_rejects_unsafe_names(value):
    """A client-supplied session id is never a path: nothing that could escape the sessions directory.

    Covers: R10.1.10
    """
    assert not ids.is_session_id(value)

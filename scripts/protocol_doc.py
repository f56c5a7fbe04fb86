"""Write the generated parts of docs/protocol.md from the code, so the wire reference never drifts.

The field tables of every command, event and shared type come from ``shard schema``
(``shard.protocol.schema.protocol_schema()``), the response data from ``shard.protocol.results``
and the error codes from ``shard.protocol.errors.ErrorCode``. Each lives in docs/protocol.md
between ``<!-- BEGIN GENERATED name … -->`` and ``<!-- END GENERATED name -->``; everything outside
those markers is written by hand and left alone.

    .venv/bin/python scripts/protocol_doc.py           # rewrite docs/protocol.md
    .venv/bin/python scripts/protocol_doc.py --check   # exit 1 if it is not what this writes

``tests/scripts/test_protocol_doc.py`` runs the check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shard.protocol import results
from shard.protocol.errors import ErrorCode
from shard.protocol.events import AgentEvent
from shard.protocol.schema import protocol_schema

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"

ERROR_MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_REQUEST: (
        "Malformed message, bad JSON, a failed validation (the field is named), an over-cap line, "
        "or a command this connection or daemon does not serve."
    ),
    ErrorCode.NOT_FOUND: (
        "No such durable agent or session, or an unknown mode, model, reasoning level or entry."
    ),
    ErrorCode.NOT_ATTACHED: (
        "A per-agent command on a daemon connection without `agent_id`, or for an agent this "
        "connection has not attached."
    ),
    ErrorCode.PERMISSION_DENIED: "The server refused the operation: an observer answering a request.",
    ErrorCode.PROTOCOL_ERROR: (
        "A peer broke the sequence: a runtime whose first messages are not `hello` then `sync`, or "
        "of another major version."
    ),
    ErrorCode.TIMEOUT: "A queued permission or UI request reached `[permissions] headless_timeout`.",
    ErrorCode.RUNTIME_START_FAILED: (
        "The agent exists but its runtime did not start or become ready (bad config, unknown model, "
        "session open elsewhere, the runtime limit); the agent is kept and a retry is safe."
    ),
    ErrorCode.SESSION_CORRUPT: (
        "A session exists but cannot be restored safely (a damaged line, a broken chain, an invalid message)."
    ),
    ErrorCode.INTERNAL_ERROR: (
        "Unexpected server-side failure: a session write failed, a runtime exited before answering, "
        "a compaction failed."
    ),
    ErrorCode.PROVIDER_ERROR: (
        "The model provider failed mid-turn (after retries), or no model is configured."
    ),
    ErrorCode.TOOL_ERROR: "A tool crashed (the call also ends with a `tool_result` with `is_error`).",
    ErrorCode.CONFLICT: (
        "The operation conflicts with the current state: compact or fork while a turn runs, a stale "
        "reasoning-level picker, a session open in another process, a runtime that is gone."
    ),
}

# What the successful response of each command carries in `data` (none: a bare `success: true`).
RESPONSE_DATA: list[tuple[str, list[type[BaseModel]]]] = [
    ("prompt, steer (queued while the agent works; else none)", [results.QueuedResult]),
    ("unqueue", [results.UnqueueResult]),
    ("abort, permission_response, ui_response", []),
    ("set_mode", [results.SetModeResult]),
    ("list_modes", [results.ListModesResult]),
    ("list_models", [results.ListModelsResult]),
    ("set_model", [results.SetModelResult]),
    ("list_reasoning_levels", [results.ListReasoningLevelsResult]),
    ("set_reasoning_level", [results.SetReasoningLevelResult]),
    ("session_op compact", [results.CompactResult, results.CompactNoop]),
    ("session_op fork", [results.ForkResult]),
    ("session_op list", [results.SessionListResult]),
    ("session.activate", [results.SessionActivateResult]),
    ("agent.create", [results.AgentCreateResult]),
    ("agent.attach", [results.AgentAttachResult]),
    ("agent.list, agent.status", [results.AgentListResult]),
    ("agent.terminate", [results.AgentTerminateResult]),
    ("agent.remove", [results.AgentRemoveResult]),
    ("agent.rename", [results.AgentRenameResult]),
    ("fs.list", [results.FsListResult]),
    ("fs.read", [results.FsReadResult]),
    ("fs.complete", [results.FsCompleteResult]),
    ("host.list", [results.HostListResult]),
    ("client.identify", [results.ClientIdentifyResult]),
    ("agent.detach, agent.kill, daemon.shutdown", []),
    ("daemon.compare_env", [results.CompareEnvResult]),
    ("workspace.create, workspace.attach", [results.WorkspaceResult]),
    ("workspace.list", [results.WorkspaceListResult]),
    ("workspace.status, workspace.retire", [results.WorkspaceDetailResult]),
    ("workspace.diff", [results.WorkspaceDiffResult]),
    ("subagent.create", [results.SubagentCreateResult]),
    ("subagent.wait", [results.SubagentWaitResult]),
    ("subagent.steer", [results.SubagentSteerResult]),
    ("subagent.relaunch", [results.SubagentRelaunchResult]),
    ("subagent.status", [results.SubagentStatusResult]),
    ("subagent.stop", [results.SubagentStopResult]),
    ("runtime.steer (daemon → runtime only)", [results.RuntimeSteerResult]),
]

_BEGIN = re.compile(r"<!-- BEGIN GENERATED (?P<name>[a-z-]+)[^>]*-->\n")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def type_heading(name: str) -> str:
    return f"type `{name}`"


class Renderer:
    def __init__(self) -> None:
        self.schema = protocol_schema()
        self.defs: dict[str, Any] = self.schema["$defs"]
        per_agent, orchestrator, events = self.schema["anyOf"]
        self.per_agent = _refs(per_agent)
        self.orchestrator = _refs(orchestrator)
        event_names = _refs(events)
        agent_events = {cls.__name__ for cls in _subclasses(AgentEvent)}
        self.connection_events = [n for n in event_names if n in ("Hello", "Response")]
        self.agent_events = [n for n in event_names if n in agent_events]
        self.daemon_events = [
            n for n in event_names if n not in agent_events and n not in self.connection_events
        ]
        self.messages = {*self.per_agent, *self.orchestrator, *event_names}
        models = [m for _, ms in RESPONSE_DATA for m in ms]
        unmapped = {
            cls.__name__
            for cls in vars(results).values()
            if isinstance(cls, type) and cls.__name__.endswith(("Result", "Noop")) and cls not in models
        }
        if unmapped:
            raise SystemExit(f"RESPONSE_DATA does not say which command answers with {sorted(unmapped)}")
        self.result_defs: dict[str, Any] = {}
        for model in models:
            schema = model.model_json_schema(ref_template="#/$defs/{model}")
            self.result_defs.update(schema.pop("$defs", {}))
            self.result_defs[model.__name__] = schema

    # --- blocks ---------------------------------------------------------------------------------

    def blocks(self) -> dict[str, Callable[[], str]]:
        return {
            "error-codes": self.error_codes,
            "connection-events": lambda: self.messages_block(self.connection_events),
            "per-agent-commands": lambda: self.messages_block(self.per_agent),
            "per-agent-events": lambda: self.messages_block(self.agent_events),
            "orchestrator-commands": lambda: self.messages_block(self.orchestrator),
            "orchestrator-events": lambda: self.messages_block(self.daemon_events),
            "response-data": self.response_data,
            "shared-types": self.shared_types,
        }

    def error_codes(self) -> str:
        missing = set(ErrorCode) - set(ERROR_MEANINGS)
        if missing:
            raise SystemExit(f"ERROR_MEANINGS lacks {sorted(missing)}")
        rows = [f"| `{code.value}` | {ERROR_MEANINGS[code]} |" for code in ErrorCode]
        return "\n".join(["| code | meaning here |", "|---|---|", *rows]) + "\n"

    def messages_block(self, names: Iterable[str]) -> str:
        parts = []
        for name in names:
            parts.append(self.model_section(self.message_heading(name), self.defs[name], self.defs))
        return "\n".join(parts)

    def message_heading(self, name: str) -> str:
        return f"`{self.defs[name]['properties']['type']['const']}`"

    def shared_types(self) -> str:
        names = sorted(n for n in self.defs if n not in self.messages)
        return "\n".join(self.model_section(type_heading(n), self.defs[n], self.defs) for n in names)

    def response_data(self) -> str:
        lines = ["| command | `data` of a successful response |", "|---|---|"]
        for commands, models in RESPONSE_DATA:
            data = " or ".join(f"[{m.__name__}](#{slug(type_heading(m.__name__))})" for m in models)
            lines.append(f"| {commands} | {data or 'none (`success: true` alone)'} |")
        extra = sorted(n for n in self.result_defs if n not in self.defs)
        sections = [self.model_section(type_heading(n), self.result_defs[n], self.result_defs) for n in extra]
        return "\n".join(lines) + "\n\n" + "\n".join(sections)

    # --- one model ------------------------------------------------------------------------------

    def model_section(self, heading: str, schema: dict[str, Any], defs: dict[str, Any]) -> str:
        out = [f"#### {heading}", ""]
        if schema.get("description"):
            out += [_one_line(schema["description"]), ""]
        props: dict[str, Any] = schema.get("properties", {})
        if props:
            required = set(schema.get("required", []))
            out += ["| field | type | required |", "|---|---|---|"]
            for field, prop in props.items():
                out.append(
                    f"| `{field}` | {self.type_of(prop, defs)} | {'yes' if field in required else ''} |"
                )
            out.append("")
        elif "properties" not in schema and schema.get("type") != "object":
            out += [f"One of: {self.type_of(schema, defs)}", ""]
        else:
            out += ["No fields.", ""]
        return "\n".join(out)

    def type_of(self, schema: dict[str, Any], defs: dict[str, Any]) -> str:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            if name in self.messages:  # a message nested in another (sync's pending requests)
                return f"[{name}](#{slug(self.message_heading(name))})"
            return f"[{name}](#{slug(type_heading(name))})"
        if "const" in schema:
            return f"`{json.dumps(schema['const'])}`"
        if "enum" in schema:
            return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return " \\| ".join(self.type_of(option, defs) for option in schema[key])
        kind = schema.get("type")
        if kind == "array":
            inner = self.type_of(schema.get("items", {}), defs)
            text = f"{inner}[]" if " " not in inner else f"({inner})[]"
            low, high = schema.get("minItems"), schema.get("maxItems")
            if low is not None and low == high:
                text += f" ({low} items)"
            elif low and high is not None:
                text += f" ({low} to {high} items)"
            elif low:
                text += f" (≥ {low} items)"
            elif high is not None:
                text += f" (≤ {high} items)"
            return text
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"object of {self.type_of(extra, defs)}"
            return "object"
        if kind is None:
            return "any JSON"
        text = " \\| ".join(kind) if isinstance(kind, list) else str(kind)
        if "minimum" in schema:
            text += f" ≥ {schema['minimum']}"
        low, high = schema.get("minLength"), schema.get("maxLength")
        if low and high is not None:
            text += f" ({low} to {high} characters)"
        elif low:
            text += " (non-empty)"
        elif high is not None:
            text += f" (≤ {high} characters)"
        if schema.get("pattern") == r"^[^\x00]*$":
            text += " (no NUL)"
        return text


def render(text: str) -> str:
    """``text`` with every generated block written anew; an unknown or unclosed block is an error."""
    blocks = Renderer().blocks()
    out, pos, seen = [], 0, set()
    for begin in _BEGIN.finditer(text):
        name = begin["name"]
        if name not in blocks:
            raise SystemExit(f"docs/protocol.md has a block this script does not write: {name}")
        end_marker = f"<!-- END GENERATED {name} -->"
        end = text.find(end_marker, begin.end())
        if end < 0:
            raise SystemExit(f"docs/protocol.md: block {name} has no {end_marker}")
        out += [text[pos : begin.end()], "\n", blocks[name]().rstrip("\n") + "\n", "\n"]
        pos = end
        seen.add(name)
    missing = set(blocks) - seen
    if missing:
        raise SystemExit(f"docs/protocol.md lacks the generated blocks {sorted(missing)}")
    out.append(text[pos:])
    return "".join(out)


def _refs(union: dict[str, Any]) -> list[str]:
    return [option["$ref"].rsplit("/", 1)[1] for option in union["oneOf"]]


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _one_line(text: str) -> str:
    return " ".join(text.replace("``", "`").split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/protocol.md is not up to date")
    args = parser.parse_args()
    current = DOC.read_text()
    fresh = render(current)
    if args.check:
        if fresh != current:
            print("docs/protocol.md is out of date: run scripts/protocol_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())

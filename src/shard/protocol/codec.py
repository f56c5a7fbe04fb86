"""Reading a JSONL record into a typed message, and writing one back.

``parse_command`` is what every server does with an inbound line: bad JSON, a non-object, a missing
or unknown ``type`` or a wrong shape all become a :class:`FrameError` (INVALID_REQUEST) carrying the
``id`` and ``command`` whenever they could be read, so the answer can still be correlated. Validation
messages name the offending field.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, TypeVar

import orjson
from pydantic import ValidationError

from shard.protocol.agent_commands import PER_AGENT_COMMANDS, RUNTIME_COMMANDS
from shard.protocol.agent_events import ErrorInfo, Response
from shard.protocol.base import WireModel
from shard.protocol.command_base import CommandBase
from shard.protocol.errors import SHOWN_CHARS, FrameError, ShardError, shown
from shard.protocol.event_base import EventBase
from shard.protocol.framing import Oversized, peek_envelope

_M = TypeVar("_M", bound=WireModel)
_WIRE = {"wire": True}
# pydantic labels the member of a union it tried (``str``, ``list[str]``) inside error locations
_UNION_LABEL = re.compile(
    r"^(str|int|float|bool|none|list\[.*\]|dict\[.*\]|tuple\[.*\]|function-.*|.*\[.*\])$"
)


def decode_object(line: bytes | str) -> dict[str, Any]:
    """Parse one record as a JSON object, or raise FrameError."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise FrameError(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise FrameError(f"a message must be a JSON object, got {_json_kind(obj)}")
    return obj


def parse_command(record: bytes | str | Oversized, *, orchestrator: bool = False) -> CommandBase:
    """Parse an inbound line into its command model.

    ``orchestrator`` says whether the connection is a daemon connection; on a direct connection the
    orchestrator commands are not part of the closed message set (R5.2.7, R10.1.1).
    """
    if isinstance(record, Oversized):
        msg_id, msg_type = peek_envelope(record.prefix)
        raise FrameError(
            f"message of {record.size} bytes exceeds the input cap", id=msg_id, command=_echoed(msg_type)
        )
    obj = decode_object(record)
    msg_id = obj.get("id") if isinstance(obj.get("id"), str) else None
    msg_type = obj.get("type")
    if "type" not in obj:
        raise FrameError("missing field 'type'", id=msg_id)
    if not isinstance(msg_type, str):
        raise FrameError(f"field 'type' must be a string, got {_json_kind(msg_type)}", id=msg_id)
    model = PER_AGENT_COMMANDS.get(msg_type)
    if model is None and not orchestrator:
        model = RUNTIME_COMMANDS.get(msg_type)  # from the daemon to its runtimes, over stdio only
    if model is None:
        model = _orchestrator_commands().get(msg_type)
        if model is not None and not orchestrator:
            raise FrameError(
                f"{shown(msg_type)} is an orchestrator command; it is only accepted on a daemon connection",
                id=msg_id,
                command=msg_type,
            )
    if model is None:
        if msg_type in _events():
            raise FrameError(f"{shown(msg_type)} is an event, not a command", id=msg_id, command=msg_type)
        raise FrameError(f"unknown message type {shown(msg_type)}", id=msg_id, command=_echoed(msg_type))
    return _validate(model, obj, msg_id, msg_type)


def parse_event(record: bytes | str | Mapping[str, Any]) -> EventBase:
    """Parse an outbound message (what a client reads) into its event model."""
    obj = dict(record) if isinstance(record, Mapping) else decode_object(record)
    msg_type = obj.get("type")
    model = _events().get(msg_type) if isinstance(msg_type, str) else None
    if model is None or not isinstance(msg_type, str):
        raise FrameError(f"unknown event type {shown(msg_type)}")
    return _validate(model, obj, None, msg_type)


# A runtime reads only its own commands (``agent_commands``) and sends only its own events: the
# orchestrator's commands and the daemon's events (~60 models, with jobs and workspaces) load when a
# line first names a type outside those, which a runtime meets only in a line it refuses.
@functools.cache
def _orchestrator_commands() -> dict[str, type[CommandBase]]:
    from shard.protocol.commands import ORCHESTRATOR_COMMANDS

    return ORCHESTRATOR_COMMANDS


@functools.cache
def _events() -> dict[str, type[EventBase]]:
    from shard.protocol.events import EVENTS

    return EVENTS


def _validate(model: type[_M], obj: dict[str, Any], msg_id: str | None, msg_type: str) -> _M:
    try:
        return model.model_validate(obj, context=_WIRE)
    except ValidationError as exc:
        raise FrameError(
            f"invalid '{msg_type}': {describe_validation_error(exc)}", id=msg_id, command=msg_type
        ) from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line naming each offending field, e.g. ``field 'message': Field required``."""
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        # A location can hold a client's own keys and a message its values: both are cut.
        loc = _cut(".".join(str(p) for p in err["loc"] if not _is_union_tag(p)))
        msg = _cut(err["msg"])
        parts.append(f"field '{loc}': {msg}" if loc else msg)
    more = exc.error_count() - len(parts)
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def _echoed(msg_type: str | None) -> str | None:
    """The ``command`` an error response echoes: the type read, unless too long to be a name."""
    return msg_type if msg_type is not None and len(msg_type) <= SHOWN_CHARS else None


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _is_union_tag(part: object) -> bool:
    return isinstance(part, str) and bool(_UNION_LABEL.match(part))


def encode(message: WireModel) -> bytes:
    """A message as one JSON document (no newline)."""
    return message.to_json()


def error_response(error: ShardError, *, id: str | None = None, command: str | None = None) -> Response:
    """The ``response {success:false}`` answering a failed command."""
    info = ErrorInfo(**error.to_wire())
    fields: dict[str, Any] = {"success": False, "error": info}
    if id is not None:
        fields["id"] = id
    if command is not None:
        fields["command"] = command
    return Response(**fields)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"

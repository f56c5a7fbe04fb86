"""Reading what the server sends, tolerantly: a client must not break on what a newer server adds.

:func:`decode_event` gives the typed event model. A ``tool_call``/``tool_result`` whose
RenderDescriptor is of a kind this client does not know is still delivered, with the descriptor kept
raw in the event's extra field ``unknown_render`` (R11.0.13); so is a ``sync`` whose window's tool
blocks carry one (each such block keeps it as its ``unknown_render``). A message of an unknown ``type`` comes
through as a plain :class:`~shard.protocol.events.EventBase` (extra fields kept). A line that is not
a JSON object with a string ``type``, or a known type in a broken shape, is dropped (None).
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import ValidationError

from shard.protocol.codec import decode_object, parse_event
from shard.protocol.errors import FrameError
from shard.protocol.events import EVENTS, EventBase
from shard.protocol.render import RenderDescriptor

_WIRE = {"wire": True}
_KINDS = frozenset(m.model_fields["kind"].default for m in get_args(get_args(RenderDescriptor)[0]))


def decode_event(raw: bytes) -> EventBase | None:
    try:
        return parse_event(raw)
    except FrameError:
        pass
    try:
        obj = decode_object(raw)
    except FrameError:
        return None
    msg_type = obj.get("type")
    if not isinstance(msg_type, str):
        return None
    model = EVENTS.get(msg_type)
    if model is None:
        return EventBase.model_validate(obj)
    if "render" in obj:
        rest = _render_aside(obj)
    elif msg_type == "sync" and isinstance(window := obj.get("live_window"), dict):
        messages = [_blocks_aside(m) for m in window.get("messages") or []]
        rest = {**obj, "live_window": {**window, "messages": messages}}
    else:
        return None
    try:
        return model.model_validate(rest, context=_WIRE)
    except ValidationError:
        return None


def _render_aside(obj: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in obj.items() if k != "render"}
    rest["unknown_render"] = obj["render"]
    return rest


def _blocks_aside(message: Any) -> Any:
    """A window message whose tool blocks' RenderDescriptors of unknown kinds are kept aside."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    content = [
        _render_aside(b) if isinstance(b, dict) and _unknown(b.get("render")) else b
        for b in message["content"]
    ]
    return {**message, "content": content}


def _unknown(render: Any) -> bool:
    return render is not None and not (isinstance(render, dict) and render.get("kind") in _KINDS)

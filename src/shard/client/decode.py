"""Reading what the server sends, tolerantly: a client must not break on what a newer server adds.

:func:`decode_event` gives the typed event model. A ``tool_call``/``tool_result`` whose
RenderDescriptor is of a kind this client does not know is still delivered, with the descriptor kept
raw in the event's extra field ``unknown_render`` (R11.0.13). A message of an unknown ``type`` comes
through as a plain :class:`~shard.protocol.events.EventBase` (extra fields kept). A line that is not
a JSON object with a string ``type``, or a known type in a broken shape, is dropped (None).
"""

from __future__ import annotations

from pydantic import ValidationError

from shard.protocol.codec import decode_object, parse_event
from shard.protocol.errors import FrameError
from shard.protocol.events import EVENTS, EventBase

_WIRE = {"wire": True}


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
        rest = {k: v for k, v in obj.items() if k != "render"}
        rest["unknown_render"] = obj["render"]
        try:
            return model.model_validate(rest, context=_WIRE)
        except ValidationError:
            return None
    return None

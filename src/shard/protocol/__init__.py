"""L0: the wire protocol — message models, error codes, JSONL framing, JSON Schema.

Never imports asyncio. Names are exported lazily so that ``shard.protocol.framing`` and
``shard.protocol.errors`` stay cheap to import on the start-up path (pydantic loads only when a model
is first needed).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ErrorCode": "errors",
    "ShardError": "errors",
    "FrameError": "errors",
    "LineBuffer": "framing",
    "Oversized": "framing",
    "encode_line": "framing",
    "parse_command": "codec",
    "parse_event": "codec",
    "encode": "codec",
    "error_response": "codec",
    "protocol_schema": "schema",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'shard.protocol' has no attribute {name!r}")
    return getattr(importlib.import_module(f"shard.protocol.{module}"), name)


__all__ = sorted(_EXPORTS)

"""JSON Schema of the whole catalog (``shard schema``)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from shard._version import PROTOCOL_VERSION
from shard.protocol.commands import OrchestratorCommand, PerAgentCommand
from shard.protocol.events import Event


def protocol_schema() -> dict[str, Any]:
    """One JSON Schema document: ``oneOf`` every command and event, shared types under ``$defs``."""
    adapter: TypeAdapter[Any] = TypeAdapter(PerAgentCommand | OrchestratorCommand | Event)
    schema = adapter.json_schema(ref_template="#/$defs/{model}")
    schema.pop("discriminator", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://shard.dev/protocol/{PROTOCOL_VERSION}/schema.json",
        "title": f"Shard wire protocol {PROTOCOL_VERSION}",
        "description": "Every command and event; each message is one of these, selected by 'type'.",
        **schema,
    }

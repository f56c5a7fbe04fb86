"""Permission presentation types (PROTOCOL §9.5)."""

from typing import Literal

from pydantic import Field

from shard.protocol.base import WireModel

Decision = Literal["allow", "allow_always", "deny"]
ChoiceIntent = Literal["allow", "persist", "deny"]


class PermissionDetail(WireModel):
    label: str | None = None
    value: str
    format: Literal["text", "command", "path", "code"] | None = None


class PermissionChoice(WireModel):
    id: str = Field(min_length=1)
    label: str
    description: str | None = None
    accelerator: str | None = None
    intent: ChoiceIntent


class ResolvedPermission(WireModel):
    """How the permission request of a tool call was answered, kept on its ``tool_call`` block in the
    live window (additive, issue 26): ``permission_resolved`` without its routing fields — the
    ``choice_id`` or ``decision`` and what it meant (``intent``), and who answered: ``source`` (a
    connection id, ``headless``, ``timeout``, ``abort``) and ``source_label`` (in words)."""

    request_id: str
    decision: Decision | None = None
    choice_id: str | None = None
    source: str | None = None
    source_label: str | None = None
    intent: ChoiceIntent | None = None

"""Who answered a request, in words (``shard.protocol.words``), from the SDK's models: the
resolution event, and the request it closes when the client still has it (a ``choice_id`` means
what its choice's intent says)."""

from __future__ import annotations

from shard.protocol.events import PermissionRequest, PermissionResolved, UiRequest, UiResolved
from shard.protocol.words import permission_outcome, ui_outcome


def resolution_text(
    event: PermissionResolved | UiResolved,
    request: PermissionRequest | UiRequest | None = None,
    *,
    mine: bool = False,
    me: str = "you",
) -> str:
    """The resolution as a person reads it — "Allowed by Chrome on Linux", "Denied by you",
    "Dismissed by my-bot" — with the viewer's own answer (``mine``: ``ShardClient.answered_here``)
    read as ``me``."""
    if isinstance(event, UiResolved):
        return ui_outcome(event.value, event.source, event.source_label, mine=mine, me=me)
    intent: str = event.intent or event.decision or ""
    if not event.intent and event.choice_id is not None and isinstance(request, PermissionRequest):
        chosen = next((c for c in request.choices or [] if c.id == event.choice_id), None)
        intent = chosen.intent if chosen is not None else ""
    return permission_outcome(intent, event.source, event.source_label, mine=mine, me=me)

"""Whether an answer fits the request it answers (PROTOCOL §9.5) — shared by the runtime, which
resolves requests, and the daemon, which forwards only the first valid answer (§6.3)."""

from __future__ import annotations

from typing import Any

from shard.protocol.errors import shown

CONFIRM_VALUES = {"yes": True, "true": True, "no": False, "false": False}


def permission_answer_error(choice_ids: set[str], choice_id: str | None) -> str | None:
    """Why a ``choice_id`` does not fit (None: it fits; the decision form always fits)."""
    if choice_id is not None and choice_id not in choice_ids:
        offered = ", ".join(sorted(choice_ids)) or "none"
        why = f"choice_id {shown(choice_id)} is not offered by this request (choices: {offered})"
        return f"{why}; the request stays open"
    return None


def ui_answer(kind: str, options: list[str] | None, value: Any) -> tuple[Any, str | None]:
    """(the normalized value, None) or (None, why it does not fit)."""
    if value is None:
        return None, None  # dismissed: a valid answer for every kind
    if kind == "select":
        opts = options or []
        chosen = [value] if isinstance(value, str) else value
        if not isinstance(chosen, list) or not chosen or any(v not in opts for v in chosen):
            return None, f"value must be one of the options: {', '.join(opts)}"
        return value, None
    if kind == "confirm":
        if not isinstance(value, str) or value.lower() not in CONFIRM_VALUES:
            return None, "a confirm answer is 'yes' or 'no' (or null)"
        return value.lower(), None
    if kind in ("input", "editor"):
        if not isinstance(value, str):
            return None, f"a {kind} answer is a string (or null)"
        return value, None
    return None, f"{kind} requests take no answer"

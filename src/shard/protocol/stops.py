"""Why an assistant message ended: ``Message.stop_reason`` (additive to PROTOCOL §11), and how each
reason reads to a person. Stdlib only, so that ``shard sessions show`` can say it without pydantic.

* ``completed`` — the model finished its reply (an absent ``stop_reason`` means the same: messages
  recorded before the field existed);
* ``aborted`` — a client's ``abort`` (Esc, Stop, Ctrl-C) cut the reply short;
* ``interrupted`` — the runtime stopped mid-reply (its process was told to shut down, or died and
  the session was restored afterwards);
* ``max_tokens`` — the reply reached the model's output limit;
* ``failed`` — the provider failed mid-reply; ``stop_detail`` says how.
"""

from __future__ import annotations

from typing import Literal

StopReason = Literal["completed", "aborted", "interrupted", "max_tokens", "failed"]

_NOTES: dict[str, str] = {
    "aborted": "stopped by you",
    "interrupted": "interrupted",
    "max_tokens": "cut off: max tokens",
    "failed": "failed",
}


def stop_note(reason: str | None, detail: str | None = None) -> str | None:
    """A short lowercase phrase for a reply that did not complete ("stopped by you", "failed: …");
    None for a completed one (or an absent reason). Clients show it, capitalized, under the message;
    a reason this code does not know (from a newer server) is shown as it is."""
    if reason is None or reason == "completed":
        return None
    note = _NOTES.get(reason, reason)  # a reason from a newer server: its own word
    return f"{note}: {detail}" if reason == "failed" and detail else note

"""What the wire carries, in the words a person reads: token counts with their units, and who
answered a permission or UI request. Stdlib only, for the Python clients (the terminal client, the
SDK; ``shard run``'s closing line keeps exact figures, which scripts and benches read); the web
client holds the same rules in ``static/js/words.js`` and a test keeps the two in step.

* **Counts**: at most three significant digits with a unit — ``999``, ``1k``, ``1.05k``, ``12.5k``,
  ``253k``, ``1M``, ``1.25M`` — rounded half up, and never ``1000k`` (that is ``1M``).
* **Who answered**: a request's resolution names who answered it (``source``, a connection id the
  daemon made, and ``source_label``, the name a person knows that connection by: the browser's
  "Chrome on Linux" from its enrollment, "terminal (pid 4242)", the name an SDK client gave). The
  viewer's own answers are "you" (or "this terminal"); the daemon's and the runtime's own
  resolutions (the headless policy, a timeout, an abort, a runtime that exited) say what happened.
"""

from __future__ import annotations

import re

_UNITS = ("", "k", "M", "B")
_CONNECTION_ID = re.compile(r"^(unix|websocket)-client-\d+$")

# How a resolution nobody typed reads: (the phrase after the verb, or a whole sentence with "{verb}")
_SYSTEM: dict[str, str] = {
    "headless": "{verb} by the headless policy",
    "timeout": "{verb}: nobody answered in time",
    "abort": "{verb}: the turn was aborted",
    "runtime-exited": "{verb}: the agent's runtime stopped",
    "closed-while-disconnected": "Closed while this client was disconnected",
    "client": "{verb} by a client",
}


# An agent's status as a person reads it (the wire's values are identifiers)
STATUS_WORDS = {
    "idle": "idle",
    "streaming": "working",
    "waiting_for_permission": "waiting for permission",
    "waiting_for_ui": "waiting for an answer",
    "compacting": "compacting",
    "error": "error",
}

_VERBS = {
    "allow": "Allowed",
    "persist": "Always allowed",
    "allow_always": "Always allowed",
    "deny": "Denied",
}


def tokens(n: int | float) -> str:
    """A token count with its unit: ``999``, ``1k``, ``1.2k``, ``253k``, ``1M``, ``1.25M``."""
    n = int(n + 0.5) if n >= 0 else -int(-n + 0.5)
    if n < 0:
        return "-" + tokens(-n)
    if n < 1000:
        return str(n)
    last = len(_UNITS) - 1
    for power in range(1, len(_UNITS)):
        scale = 1000**power
        if n >= 1000 * scale and power < last:
            continue
        decimals = 2 if n < 10 * scale else 1 if n < 100 * scale else 0
        step = 10**decimals
        rounded = (n * step * 2 + scale) // (2 * scale)  # in units of 1/step, half up
        if rounded >= 1000 * step and power < last:
            continue  # 999_999 is 1M, not 1000k
        whole, frac = divmod(rounded, step)
        text = f"{whole}.{frac:0{decimals}d}".rstrip("0").rstrip(".") if decimals else str(whole)
        return text + _UNITS[power]
    raise AssertionError("unreachable")  # the last unit takes any count


def status(value: str | None) -> str:
    """An agent's status in words; a value this client does not know, with its underscores read."""
    if not value:
        return ""
    return STATUS_WORDS.get(value, value.replace("_", " "))


def answerer(source: str | None, label: str | None, *, mine: bool = False, me: str = "you") -> str:
    """Who answered, for a person: ``me`` for the viewer's own answer, else the label the daemon
    gave the connection, else a generic "another client" (never a connection id)."""
    if mine:
        return me
    if label:
        return label
    if source and _CONNECTION_ID.match(source):
        return "a web client" if source.startswith("websocket") else "a local client"
    return source or "another client"


def permission_outcome(
    intent: str,
    source: str | None,
    label: str | None = None,
    *,
    mine: bool = False,
    me: str = "you",
) -> str:
    """Who answered and how: "Allowed by Chrome on Linux", "Always allowed by you", "Denied by the
    headless policy". ``intent`` is the chosen choice's (``allow`` | ``persist`` | ``deny``) or the
    legacy decision's (``allow`` | ``allow_always`` | ``deny``); another (a choice whose request the
    viewer no longer has) reads "Answered"."""
    return _sentence(_VERBS.get(intent, "Answered"), source, label, mine, me)


def ui_outcome(
    value: object, source: str | None, label: str | None = None, *, mine: bool = False, me: str = "you"
) -> str:
    """Who answered and what: "Dismissed by this terminal", "Answered by my-bot: yes"."""
    if value is None:
        return _sentence("Dismissed", source, label, mine, me)
    shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return f"{_sentence('Answered', source, label, mine, me)}: {shown}"


def _sentence(verb: str, source: str | None, label: str | None, mine: bool, me: str) -> str:
    if not mine and not label and source in _SYSTEM:
        return _SYSTEM[source].format(verb=verb)
    return f"{verb} by {answerer(source, label, mine=mine, me=me)}"

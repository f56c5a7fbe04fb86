"""How ``shard run`` shows a tool call on stderr (pure): one line, whatever its arguments hold, and
for a call nobody could approve, the ``--allow`` that would have let it run.

``» bash command=rm -rf build`` then ``  denied: nobody can answer here; to allow it: --allow 'bash:rm
-rf build'`` — the option in the form ``shard.agent.permissions.allowances`` reads, quoted for a POSIX
shell (bash's ``$'…'`` when it holds a newline, so it stays one line too).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CUT = 120  # characters of one argument's value shown; the rest is "…"
_SHOWN = {"\n": "⏎", "\r": "⏎", "\t": "⇥"}
_ESCAPED = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(value: Any, limit: int = CUT) -> str:
    """A value as one line of at most ``limit`` characters: line breaks as ⏎, tabs as ⇥, any other
    control character escaped, JSON for what is not a string."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\r\n", "\n")
    text = "".join(_SHOWN.get(c, c if c.isprintable() else c.encode("unicode_escape").decode()) for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_line(name: str, args: Mapping[str, Any]) -> str:
    """``» NAME key=value …``, one line."""
    shown = " ".join(f"{key}={one_line(value)}" for key, value in args.items())
    return f"» {one_line(name)} {shown}".rstrip()


def allowance(tool: str, args: Mapping[str, Any], *, outside: bool, cwd: str) -> str:
    """The option that lets this call run in a ``shard run``: ``--allow 'bash:COMMAND'`` when the
    grant for commands like it covers this one (else ``--allow bash``), ``--allow TOOL`` for a call
    inside the working directory, ``--yes-to-all`` for one outside it (``--allow TOOL`` stops there)."""
    if tool == "bash":
        from shard.agent.permissions.allowances import AllowanceError, Allowances
        from shard.agent.permissions.reach import reaches_outside

        spec = f"bash:{args.get('command', '')}"
        try:
            rules = Allowances.parse([spec], yes_to_all=False, tool_names=["bash"])
        except AllowanceError:
            return "--allow bash"
        if rules.allows("bash", dict(args), outside=False, reach=lambda w: reaches_outside([Path(cwd)], w)):
            return f"--allow {quoted(spec)}"
        return "--allow bash"
    return "--yes-to-all" if outside else f"--allow {quoted(tool)}"


def quoted(word: str) -> str:
    """``word`` as one shell word on one line."""
    if all(c.isprintable() for c in word):
        return shlex.quote(word)
    return "$'" + "".join(_ESCAPED.get(c, c if c.isprintable() else _hex(c)) for c in word) + "'"


def _hex(c: str) -> str:
    return "".join(f"\\x{b:02x}" for b in c.encode())

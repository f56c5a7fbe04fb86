"""How a config.toml mistake is told: one line naming the file, the line and the key, and for an
unknown key the closest known name.

tomllib keeps no positions, so the line is found by scanning the text for the table headers and
``key =`` assignments along the key's path. The scan is a heuristic, not a TOML parser: it follows
``[table]`` / ``[[array]]`` headers and the first ``key =`` after the enclosing table (at a line
start, or after ``{`` or ``,`` in an inline table); when it cannot tell, it names no line rather than
a wrong one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

KeyPath = tuple[str | int, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")


class Mistake(Exception):
    """A mistake at the key path ``at``.

    ``problem`` completes the sentence that starts with the key ("… must be an integer, got a
    string"). Without one the key is unknown, and ``known`` maps what could have been meant to how
    it is written (``{"retry": "[retry]"}``). ``line_at`` is the path whose line is named (for a
    missing key: its table).
    """

    def __init__(
        self,
        at: KeyPath,
        problem: str | None = None,
        *,
        known: Mapping[str, str] | None = None,
        value: object = None,
        line_at: KeyPath | None = None,
    ) -> None:
        super().__init__(problem)
        self.at = at
        self.problem = problem
        self.known = known or {}
        self.value = value
        self.line_at = at if line_at is None else line_at

    def explain(self, text: str, path: Path) -> str:
        line = locate(text, self.line_at)
        where = f"{path} line {line}" if line else str(path)
        if self.problem is not None:
            return f"{where}: {dotted(self.at)} {self.problem}"
        return f"{where}: {self._unknown()}"

    def _unknown(self) -> str:
        import difflib  # only a mistake pays for it

        name = str(self.at[-1])
        top = len(self.at) == 1
        if top and isinstance(self.value, dict):
            what = f"table [{_key(name)}]"
        elif top and _tables(self.value):
            what = f"table [[{_key(name)}]]"
        else:
            what = f"key {dotted(self.at)}"
        close = difflib.get_close_matches(name, list(self.known), n=1, cutoff=0.6)
        if close:
            return f"unknown {what} (did you mean {self.known[close[0]]}?)"
        return f"unknown {what} (known: {', '.join(self.known.values())})"


def _tables(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def dotted(at: KeyPath) -> str:
    """``providers[0].models[1].id``."""
    out = ""
    for segment in at:
        out += f"[{segment}]" if isinstance(segment, int) else f".{_key(segment)}" if out else _key(segment)
    return out


def _key(name: str) -> str:
    """A key as TOML writes it: bare when it can be, else quoted (a key may hold a newline)."""
    if _BARE.fullmatch(name):
        return name
    import json

    return json.dumps(name[:100] + ("…" if len(name) > 100 else ""), ensure_ascii=False)


def locate(text: str, at: KeyPath) -> int | None:
    """The 1-based line where the last key of ``at`` is written (for a trailing index: that element's
    ``[[header]]``, or the line of its inline array); None when the scan cannot tell."""
    lines = text.splitlines()
    names: list[str] = []
    pos = 0
    found: int | None = None
    for segment in at:
        if isinstance(segment, int):
            table = ".".join(names)
            headers = [i for i in range(pos, len(lines)) if _header(lines[i]) == ("[[", table)]
            if segment < len(headers):
                pos = headers[segment]
                found = pos + 1
            continue  # an inline array: its elements share the key's line (or follow it)
        names.append(segment)
        hit = _find(lines, pos, ".".join(names), segment)
        if hit is None:
            return None
        pos, found = hit, hit + 1
    return found


def _find(lines: list[str], start: int, table: str, key: str) -> int | None:
    """The index of the first header of ``table``, else of the first ``key =``, from ``start`` on."""
    for i in range(start, len(lines)):
        header = _header(lines[i])
        if header is not None and header[1] == table:
            return i
    pattern = _assignment(key)
    for i in range(start, len(lines)):
        if pattern.search(lines[i]):
            return i
    return None


def _header(line: str) -> tuple[str, str] | None:
    """``("[[", "providers.models")`` for a header line; None for anything else."""
    match = _HEADER.match(line)
    if match is None:
        return None
    name = re.sub(r"\s*\.\s*", ".", match.group(2)).replace('"', "").replace("'", "")
    return match.group(1), name


def _assignment(key: str) -> re.Pattern[str]:
    quoted = re.escape(key)
    return re.compile(rf"(?:^|[{{,])\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*=")

"""Gitignore matching and the file walk that the pure-Python grep/find fallbacks share.

It reproduces what ``rg --hidden --no-require-git`` walks: every file under the root, hidden ones
included, without following symlinks, skipping ``.git/`` and whatever ``.gitignore``, ``.ignore`` and
``.git/info/exclude`` files exclude — with gitignore semantics: the last matching pattern wins, ``!``
re-includes, a trailing ``/`` matches directories only, a pattern with a ``/`` before its end is
anchored to its file's directory, ``**`` spans directories, and a file under an excluded directory
stays excluded.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILES = (".gitignore", ".ignore")


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def glob_to_regex(pattern: str, anchored: bool) -> str:
    """A gitignore glob as a regex over '/'-separated relative paths (no leading slash)."""
    i, n = 0, len(pattern)
    out = ["^" if anchored else "^(?:.*/)?"]
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if close < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : close]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    out.append("$")
    return "".join(out)


def parse_rules(text: str) -> list[Rule]:
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip("\n\r")
        if not line or line.startswith("#"):
            continue
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        if not line:
            continue
        negate = line.startswith("!")
        if negate or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        try:
            regex = re.compile(glob_to_regex(line, anchored))
        except re.error:
            continue
        rules.append(Rule(regex, negate, dir_only))
    return rules


class IgnoreStack:
    """The rules in force in one directory: its ancestors' (up to the walk root) and its own."""

    def __init__(self, layers: tuple[tuple[str, list[Rule]], ...] = ()) -> None:
        self.layers = layers  # (directory relative to root, its rules), outermost first

    def child(self, rel_dir: str, rules: list[Rule]) -> IgnoreStack:
        return IgnoreStack((*self.layers, (rel_dir, rules))) if rules else self

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        verdict = False
        for base, rules in self.layers:
            if base:
                if not rel_path.startswith(base + "/"):
                    continue
                sub = rel_path[len(base) + 1 :]
            else:
                sub = rel_path
            for rule in rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(sub):
                    verdict = not rule.negate
        return verdict


def _read_rules(directory: Path) -> list[Rule]:
    rules: list[Rule] = []
    for name in IGNORE_FILES:
        with contextlib.suppress(OSError):
            rules += parse_rules((directory / name).read_text(errors="replace"))
    return rules


def walk(root: Path) -> Iterator[str]:
    """Relative paths ('/'-separated) of the files under ``root`` that a search should see, sorted."""
    base_rules = []
    with contextlib.suppress(OSError):
        base_rules = parse_rules((root / ".git" / "info" / "exclude").read_text(errors="replace"))
    stack = IgnoreStack().child("", base_rules + _read_rules(root))
    yield from _walk(root, "", stack)


def _walk(directory: Path, rel: str, stack: IgnoreStack) -> Iterator[str]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == ".git":
            continue
        rel_path = f"{rel}/{entry.name}" if rel else entry.name
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir()
        except OSError:
            continue
        if stack.ignored(rel_path, is_dir):
            continue
        if is_dir:
            yield from _walk(Path(entry.path), rel_path, stack.child(rel_path, _read_rules(Path(entry.path))))
        elif entry.is_file():
            yield rel_path

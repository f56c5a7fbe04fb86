"""Gitignore matching and the file walk that the pure-Python grep/find fallbacks share, and the
matching the daemon's read-only file tree (``shard.daemon.files``) hides ignored files with: below
both layers, as the one place these rules live.

It reproduces what ``rg --hidden --no-require-git`` walks: every file under the root, hidden ones
included, without following symlinks, skipping ``.git/`` and whatever the ignore files exclude, with
ripgrep's semantics:

* Ignore files: ``.rgignore``, ``.ignore`` and ``.gitignore`` in the searched directory, its
  subdirectories *and its parents*; plus ``.git/info/exclude`` of the repository it is in.
* Precedence: a ``.rgignore`` match beats any ``.ignore`` match, which beats any ``.gitignore`` /
  ``exclude`` match; within one kind the deepest directory's last matching rule wins.
* Gitignore patterns: ``!`` re-includes, a trailing ``/`` matches directories only, a ``/`` before the
  end anchors the pattern to its file's directory, ``**`` spans directories only as a whole path
  segment (``a**z`` is ``a*z``), and ``?`` / ``[…]`` match one *byte* (as git does), so paths are
  matched as UTF-8 bytes. A file under an excluded directory stays excluded.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Precedence order: the first kind with a matching rule decides.
KINDS = ((".rgignore",), (".ignore",), (".gitignore",))


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[bytes]
    negate: bool
    dir_only: bool


def glob_to_regex(pattern: str, anchored: bool) -> str:
    """A gitignore glob as a regex over '/'-separated relative paths (no leading slash)."""
    i, n = 0, len(pattern)
    out = ["^" if anchored else "^(?:.*/)?"]
    while i < n:
        c = pattern[i]
        at_segment_start = i == 0 or pattern[i - 1] == "/"
        if pattern.startswith("**", i) and at_segment_start and (i + 2 == n or pattern[i + 2] == "/"):
            if i + 2 == n:  # trailing **: everything below
                out.append(".*")
                i += 2
            else:  # **/: zero or more directories
                out.append("(?:.*/)?")
                i += 3
        elif c == "*":
            while i < n and pattern[i] == "*":
                i += 1  # a ** that is not a whole segment is a plain *
            out.append("[^/]*")
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


def compile_bytes(regex: str) -> re.Pattern[bytes]:
    # one "character" in a glob is one byte for git and ripgrep: match the UTF-8 encoded path
    return re.compile(regex.encode("utf-8"), re.DOTALL)


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
        if negate or line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        try:
            regex = compile_bytes(glob_to_regex(line, anchored))
        except re.error:
            continue
        rules.append(Rule(regex, negate, dir_only))
    return rules


class IgnoreStack:
    """The rules in force in one directory: for each kind, layers of (directory prefix, rules)."""

    def __init__(self, layers: tuple[tuple[tuple[bytes, list[Rule]], ...], ...] = ((), (), ())) -> None:
        self.layers = layers

    def child(self, prefix: bytes, found: tuple[list[Rule], list[Rule], list[Rule]]) -> IgnoreStack:
        if not any(found):
            return self
        return IgnoreStack(
            tuple(
                (*layer, (prefix, rules)) if rules else layer
                for layer, rules in zip(self.layers, found, strict=True)
            )
        )

    def ignored(self, path: bytes, is_dir: bool) -> bool:
        """``path`` is relative to the walk root's *anchor* (see :func:`walk`)."""
        for layer in self.layers:
            verdict: bool | None = None
            for prefix, rules in layer:
                if prefix:
                    if not path.startswith(prefix):
                        continue
                    sub = path[len(prefix) :]
                else:
                    sub = path
                for rule in rules:
                    if rule.dir_only and not is_dir:
                        continue
                    if rule.regex.match(sub):
                        verdict = not rule.negate
            if verdict is not None:
                return verdict
        return False


def read_rules(directory: Path) -> tuple[list[Rule], list[Rule], list[Rule]]:
    found: list[list[Rule]] = []
    for names in KINDS:
        rules: list[Rule] = []
        for name in names:
            with contextlib.suppress(OSError, UnicodeError):
                rules += parse_rules((directory / name).read_text(errors="replace"))
        found.append(rules)
    return found[0], found[1], found[2]


def anchor_stack(root: Path) -> tuple[IgnoreStack, bytes]:
    """The rules from the root's parents (and the repository's exclude file), and the root's path
    relative to the topmost parent, as the prefix every walked path is matched under."""
    root = Path(os.path.realpath(root))
    ancestors = [*reversed(root.parents), root]
    top = ancestors[0]
    stack = IgnoreStack()
    repo = next((d for d in reversed(ancestors) if (d / ".git").exists()), None)
    for directory in ancestors:
        rel = directory.relative_to(top).as_posix()
        prefix = b"" if rel == "." else rel.encode() + b"/"
        rgignore, ignore, gitignore = read_rules(directory)
        if directory == repo:
            with contextlib.suppress(OSError, UnicodeError):
                exclude = parse_rules((directory / ".git" / "info" / "exclude").read_text(errors="replace"))
                gitignore = exclude + gitignore
        stack = stack.child(prefix, (rgignore, ignore, gitignore))
    rel_root = root.relative_to(top).as_posix()
    return stack, b"" if rel_root == "." else rel_root.encode() + b"/"


def walk(root: Path) -> Iterator[str]:
    """Relative paths ('/'-separated) of the files under ``root`` that a search should see, sorted."""
    stack, anchor = anchor_stack(root)
    yield from _walk(root, "", anchor, stack)


def _walk(directory: Path, rel: str, anchor: bytes, stack: IgnoreStack) -> Iterator[str]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: os.fsencode(e.name))
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
        full = anchor + os.fsencode(rel_path)
        if stack.ignored(full, is_dir):
            continue
        if is_dir:
            child = stack.child(full + b"/", read_rules(Path(entry.path)))
            yield from _walk(Path(entry.path), rel_path, anchor, child)
        elif entry.is_file():
            yield rel_path

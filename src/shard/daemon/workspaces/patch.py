"""What ``workspace.diff`` answers, from git's own output (pure: ``worktree_diff.py`` runs git).

git is asked twice with the same options, so both name the same files in the same order: once for
``--raw --numstat -z`` (the list — status, paths as bytes, line counts — which no file name can
confuse) and once for the patch, which is split at its ``diff --git`` lines (a content line inside a
hunk always starts with a space, ``+`` or ``-``, so none can be taken for one) and paired with the
list in order. Hunks take the shape of the diff RenderDescriptor (``protocol/render.py``). The
answer is bounded: at most ``MAX_FILES`` files, ``MAX_FILE_BYTES`` of hunk lines per file and
``MAX_TOTAL_BYTES`` in all; what is cut says ``truncated``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_FILES = 500
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024

_STATUS = {"A": "added", "D": "deleted", "R": "renamed"}  # anything else (M, T, U) is "modified"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(slots=True)
class Entry:
    """One file of git's list: its status letter, path (and the path it was renamed from), counts
    (None: git counted none — a binary file, or one over git's size for diffing)."""

    status: str
    path: str
    old_path: str | None = None
    added: int | None = None
    removed: int | None = None


@dataclass(slots=True)
class Chunk:
    """One file's part of the patch: its hunks, and whether git called it binary."""

    hunks: list[dict[str, Any]] = field(default_factory=list)
    binary: bool = False


def text(path: str) -> str:
    """A path or line git gave as bytes (undecodable ones kept as surrogates) as valid text."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_list(output: str) -> list[Entry]:
    """``git diff --raw --numstat -z``: the raw records first, then one numstat record per file.
    A record cut short at the end (the output was bounded) is dropped."""
    tokens = output.split("\0")[:-1]  # every token ends with a NUL: what follows the last is cut
    entries: list[Entry] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith(":"):
        letter = tokens[i].split(" ")[-1][:1]
        paths = 2 if letter in ("R", "C") else 1
        if i + paths >= len(tokens):
            break
        if paths == 2:
            entries.append(Entry(letter, tokens[i + 2], old_path=tokens[i + 1]))
        else:
            entries.append(Entry(letter, tokens[i + 1]))
        i += 1 + paths
    for entry in entries:
        if i >= len(tokens) or tokens[i].count("\t") < 2:
            break
        added, removed, rest = tokens[i].split("\t", 2)
        i += 1 if rest else 3  # a rename's numstat names its two paths in the next two tokens
        entry.added = int(added) if added.isdigit() else None
        entry.removed = int(removed) if removed.isdigit() else None
    return entries


def split_patch(output: str) -> list[str]:
    """The patch cut into one part per file, in git's order."""
    parts: list[str] = []
    for line in output.split("\n"):
        if line.startswith("diff --git "):
            parts.append("")
        if parts:
            parts[-1] += line + "\n"
    return parts


def parse_chunk(part: str) -> Chunk:
    chunk = Chunk()
    hunk: dict[str, Any] | None = None
    for line in part.split("\n"):
        head = _HUNK.match(line)
        if head is not None:
            a, b, c, d = head.groups()
            hunk = {
                "old_start": int(a),
                "old_lines": 1 if b is None else int(b),
                "new_start": int(c),
                "new_lines": 1 if d is None else int(d),
                "lines": [],
            }
            chunk.hunks.append(hunk)
        elif hunk is None:
            if line.startswith("Binary files ") or line == "GIT binary patch":
                chunk.binary = True
        elif line[:1] in (" ", "+", "-"):
            hunk["lines"].append(text(line[:-1] if line.endswith("\r") else line))
        # "\ No newline at end of file" is no line of either side: the descriptor has no place for it
    return chunk


def answer(
    entries: list[Entry], parts: list[str], *, total: int, cut: bool, too_large: set[str]
) -> dict[str, Any]:
    """The ``files`` of the answer and whether it was ``truncated``. ``total``: the files there are
    (the list may hold fewer: it was bounded); ``cut``: the patch was bounded, so the files past its
    end have no hunks; ``too_large``: paths git took for binary because they are over its size."""
    files: list[dict[str, Any]] = []
    spent = 0
    truncated = cut or total > len(entries) or len(entries) > MAX_FILES
    for i, entry in enumerate(entries[:MAX_FILES]):
        one: dict[str, Any] = {
            "path": text(entry.path),
            "status": _STATUS.get(entry.status, "modified"),
            "added": entry.added or 0,
            "removed": entry.removed or 0,
            "hunks": [],
        }
        if entry.old_path is not None:
            one["old_path"] = text(entry.old_path)
        chunk = parse_chunk(parts[i]) if i < len(parts) else None
        if chunk is None or (cut and i == len(parts) - 1):
            one["truncated"] = True  # past the end of the bounded patch, or cut inside it
        elif entry.path in too_large:
            one["truncated"] = True
        elif chunk.binary:
            one["binary"] = True
        else:
            kept, size, whole = _bounded(chunk.hunks, min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - spent))
            one["hunks"] = kept
            spent += size
            if not whole:
                one["truncated"] = True
                truncated = True
        truncated = truncated or bool(one.get("truncated"))
        files.append(one)
    return {"files": files, "truncated": truncated}


def _bounded(hunks: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], int, bool]:
    """The whole hunks that fit in ``budget`` bytes of lines: (kept, bytes, all kept)."""
    kept: list[dict[str, Any]] = []
    size = 0
    for hunk in hunks:
        cost = sum(len(line.encode()) + 1 for line in hunk["lines"])
        if size + cost > budget:
            return kept, size, False
        kept.append(hunk)
        size += cost
    return kept, size, True

"""grep and find: ripgrep when it is on PATH, else a pure-Python walk with the same results.

Both engines see the same files (hidden ones included, ``.git/`` and gitignored paths excluded,
symlinks not followed, binary files skipped by grep) and return them in the same order (by path, then
line), so the limits cut at the same place whichever engine runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from shard.agent.tools.base import ToolFailure
from shard.agent.tools.ignore import glob_to_regex, walk

MAX_LINE_CHARS = 500
_RG_BASE = ("--hidden", "--no-require-git", "--glob", "!.git", "--sort", "path", "--no-config")


@dataclass(frozen=True, slots=True)
class Match:
    path: str  # relative to the search root, '/'-separated
    line: int
    text: str


def ripgrep() -> str | None:
    return shutil.which("rg")


def glob_matcher(pattern: str) -> re.Pattern[str]:
    """A find/grep ``glob`` the way rg reads ``--glob``: no '/' matches names at any depth."""
    anchored = "/" in pattern.rstrip("/")
    return re.compile(glob_to_regex(pattern.lstrip("/"), anchored))


async def _rg_lines(args: list[str], root: Path, limit: int) -> list[str]:
    """Run rg, keep its first ``limit`` output lines, and stop it once they arrived."""
    rg = ripgrep()
    assert rg is not None
    proc = await asyncio.create_subprocess_exec(
        rg, *args, cwd=root, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        while len(lines) < limit:
            raw = await proc.stdout.readline()
            if not raw:
                break
            lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
    if proc.returncode == 2 and not lines:
        err = (await proc.stderr.read()).decode(errors="replace").strip() if proc.stderr else ""
        raise ToolFailure(f"search failed: {err.splitlines()[0] if err else 'ripgrep error'}")
    return lines


async def find_files(root: Path, pattern: str | None, limit: int, engine: str | None = None) -> list[str]:
    """Up to ``limit`` file paths under ``root`` (matching ``pattern``), sorted."""
    if (engine or ("rg" if ripgrep() else "python")) == "rg":
        args = ["--files", *_RG_BASE]
        if pattern:
            args += ["--glob", pattern]
        return [p.removeprefix("./") for p in await _rg_lines(args, root, limit)]
    return await asyncio.to_thread(_find_py, root, pattern, limit)


def _find_py(root: Path, pattern: str | None, limit: int) -> list[str]:
    matcher = glob_matcher(pattern) if pattern else None
    out: list[str] = []
    for rel in walk(root):
        if matcher is None or matcher.match(rel):
            out.append(rel)
            if len(out) >= limit:
                break
    return out


async def grep_files(
    root: Path,
    pattern: str,
    *,
    glob: str | None,
    ignore_case: bool,
    literal: bool,
    limit: int,
    engine: str | None = None,
) -> list[Match]:
    try:
        regex = re.compile(re.escape(pattern) if literal else pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolFailure(f"invalid regular expression: {exc}") from None
    if (engine or ("rg" if ripgrep() else "python")) == "rg":
        args = ["--line-number", "--no-heading", "--with-filename", "--null", "--color", "never", *_RG_BASE]
        if ignore_case:
            args.append("--ignore-case")
        if literal:
            args.append("--fixed-strings")
        if glob:
            args += ["--glob", glob]
        args += ["--regexp", pattern]
        out = []
        for raw in await _rg_lines(args, root, limit):
            path, _, rest = raw.partition("\0")  # --null: a path may itself contain ':'
            number, _, text = rest.partition(":")
            if number.isdigit():
                text = text.removesuffix("\r")
                out.append(Match(path.removeprefix("./"), int(number), text[:MAX_LINE_CHARS]))
        return out
    return await asyncio.to_thread(_grep_py, root, regex, glob, limit)


def _grep_py(root: Path, regex: re.Pattern[str], glob: str | None, limit: int) -> list[Match]:
    matcher = glob_matcher(glob) if glob else None
    out: list[Match] = []
    for rel in walk(root):
        if matcher is not None and not matcher.match(rel):
            continue
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), start=1):
            line = line.removesuffix("\r")
            if regex.search(line):
                out.append(Match(rel, number, line[:MAX_LINE_CHARS]))
                if len(out) >= limit:
                    return out
    return out

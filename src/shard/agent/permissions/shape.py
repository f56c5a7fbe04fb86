"""One simple command read with the table of :mod:`commands`: its pinned executable, its flags and
its free arguments — or :class:`Refuse` when no signature could be honest about what it runs.

The words come already split by :mod:`shell`. Pure: no I/O.
"""

from __future__ import annotations

from typing import NamedTuple

from shard.agent.permissions.commands import PLAIN, row_for


class Refuse(Exception):
    """No signature can stand for this command: only an exact grant may allow it."""


_DYNAMIC = ("$", "`sub`", "$(…)", "$((…))", "<(…)")  # what the tokenizer leaves for expansions
_GLOB = ("*", "?", "[")
_STDIN = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


class Shape(NamedTuple):
    executable: str  # the command word as typed, with its subcommand and pinned words
    flags: list[str]
    free: list[str]  # operands the signature leaves open (checked against the working directory)


def shape(args: list[str], depth: int = 0) -> Shape:
    """The signature parts of one simple command (its words, the command first); Refuse when no
    signature could be honest about what it runs."""
    if depth > 4 or not args:
        raise Refuse
    exe = args[0]
    _literal(exe)
    row = row_for(exe)
    name, rest = exe, args[1:]
    if row.subcommand and rest:
        if rest[0].startswith("-"):  # options before the subcommand may take values: cannot tell
            raise Refuse
        _literal(rest[0])
        name, sub, rest = f"{exe} {rest[0]}", rest[0], rest[1:]
        row = row.subs.get(sub, PLAIN)
    if row.exact_only:
        raise Refuse
    pinned: list[str] = []
    flags: list[str] = []
    free: list[str] = []
    operands = 0
    dashdash = False
    i = 0
    while i < len(rest):
        word = rest[i]
        if not dashdash and word == "--":
            dashdash = True
        elif not dashdash and word.startswith("-") and word != "-":
            key = word.split("=", 1)[0]
            if row.stop_at_pin and operands >= row.pin:
                flags.append(word)  # the script's own option, not the interpreter's
            elif _listed(word, row.refuse):
                raise Refuse
            elif key in row.command_flags:
                inner = shape(rest[i + 1 :], depth + 1)
                executable = " ".join([name, *pinned, word, inner.executable])
                return Shape(executable, flags + inner.flags, free + inner.free)
            elif key in row.value_flags or (not word.startswith("--") and word[:2] in row.value_flags):
                if "=" not in word and (len(word) <= 2 or word.startswith("--")):  # value is the next word
                    if i + 1 >= len(rest):
                        raise Refuse
                    _literal(rest[i + 1])
                    pinned += [word, rest[i + 1]]
                    i += 1
                else:
                    pinned.append(word)
                if row.value_flags_pin:
                    operands = max(operands, row.pin)
            elif (operands < row.pin or row.command_after) and not _allowed(word, row.before):
                raise Refuse  # an option before the pinned words may take one of them as its value
            else:
                flags.append(word)
        else:
            if row.no_assignments and "=" in word and word.split("=", 1)[0].isidentifier():
                raise Refuse
            if row.command_after:
                inner = shape(rest[i:], depth + 1)
                prefix = [name, *pinned, *flags]
                return Shape(" ".join([*prefix, inner.executable]), inner.flags, free + inner.free)
            if operands < row.pin or row.pin_all:
                _literal(word)
                if row.pin and word in _STDIN:  # the code would come from stdin: anything at all
                    raise Refuse
                pinned.append(word)
            else:
                free.append(word)
            operands += 1
        i += 1
    if (operands < row.pin and not row.pin_optional) or row.command_after:
        raise Refuse  # an interpreter with no script reads its code from stdin (a pipe: anything)
    return Shape(" ".join([name, *pinned]), flags, free)


def _literal(word: str) -> None:
    """A pinned word must mean the same thing every time: no expansions, no globs."""
    if any(d in word for d in _DYNAMIC) or any(g in word for g in _GLOB):
        raise Refuse


def _listed(flag: str, entries: frozenset[str]) -> bool:
    """Is ``flag`` one of ``entries``: exactly, with ``=value``, by a ``*`` prefix, or — for a
    one-letter flag — with its value attached or inside a cluster of short flags (``bash -xc``)?"""
    if not entries:
        return False
    key = flag.split("=", 1)[0]
    if key in entries or flag in entries:
        return True
    for entry in entries:
        if entry.endswith("*") and flag.startswith(entry[:-1]):
            return True
        short = len(entry) == 2 and entry[0] == "-" and not flag.startswith("--") and len(flag) > 2
        if short and (flag.startswith(entry) or entry[1] in flag[1:]):
            return True
    return False


def _allowed(flag: str, entries: frozenset[str]) -> bool:
    """Is ``flag`` allowed by ``entries``: exactly, by a ``*`` prefix, or as a cluster of short
    flags that are each allowed (``bash -eu``)?"""
    if flag in entries or any(e.endswith("*") and flag.startswith(e[:-1]) for e in entries):
        return True
    cluster = flag[1:]
    return not flag.startswith("--") and len(cluster) > 1 and all(f"-{c}" in entries for c in cluster)

"""Stored permission grants and the matchers that interpret them (PROTOCOL §9.5, DESIGN §6).

A grant is a ``grant`` session entry, so grants survive restarts and travel with forks. Its ``rule``
is interpreted only by the matcher registered for its ``kind``:

* ``exact`` — ``{kind, tool, input}``: this tool with exactly this input (canonical JSON) again. What
  the legacy ``allow_always`` decision records.
* ``bash_signature`` v1 — ``{kind, version: 1, signatures: [{executable, flags}]}``: a bash command
  whose every simple command's signature (see :mod:`shell` and the table in :mod:`commands`) is one
  of the recorded ones, and none of whose free arguments reaches outside the working directory
  (see :mod:`reach`): such a command asks again.

An unknown kind, an unknown version or a malformed rule never matches (fail closed). Rules come only
from the runtime's own grants, never from configuration or clients.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from shard.agent.permissions.shell import Signature, analyze_commands

Reach = Callable[[str], bool]


def canonical(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def exact_rule(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "exact", "tool": tool, "input": canonical(args)}


def signature_rule(signatures: list[Signature]) -> dict[str, Any]:
    unique = sorted(set(signatures))
    return {
        "kind": "bash_signature",
        "version": 1,
        "signatures": [{"executable": s.executable, "flags": list(s.flags)} for s in unique],
    }


def matches(rule: Any, tool: str, args: dict[str, Any], reaches_outside: Reach | None = None) -> bool:
    """Does a stored rule allow this call? False for anything it cannot interpret.

    ``reaches_outside`` judges a signature's free arguments against the working directory; without
    one, the words alone decide (absolute, ``~``, ``..`` or an expansion: outside)."""
    if not isinstance(rule, dict) or not isinstance(rule.get("kind"), str):
        return False
    matcher = _MATCHERS.get(rule["kind"])
    if matcher is None:
        return False
    try:
        return matcher(rule, tool, args, reaches_outside or _looks_outside)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False  # malformed: fail closed


def _looks_outside(word: str) -> bool:
    candidates = [word, word.split("=", 1)[-1], word.removeprefix("@")]
    return any(
        c.startswith(("/", "~")) or ".." in c.split("/") or any(x in c for x in "$`") for c in candidates
    )


def _match_exact(rule: dict[str, Any], tool: str, args: dict[str, Any], _reach: Reach) -> bool:
    if not isinstance(rule["tool"], str) or not isinstance(rule["input"], str):
        return False
    return rule["tool"] == tool and rule["input"] == canonical(args)


def _match_signature(rule: dict[str, Any], tool: str, args: dict[str, Any], reach: Reach) -> bool:
    version = rule.get("version")
    if tool != "bash" or type(version) is not int or version != 1:  # True == 1, but is no version
        return False
    allowed = set()
    for sig in rule["signatures"]:
        exe, flags = sig["executable"], sig["flags"]
        if (
            not isinstance(exe, str)
            or not isinstance(flags, list)
            or not all(isinstance(f, str) for f in flags)
        ):
            return False
        allowed.add(Signature(exe, tuple(sorted(flags))))
    command = args.get("command")
    if not isinstance(command, str):
        return False
    found = analyze_commands(command)
    if found is None or not all(c.signature in allowed for c in found):
        return False
    return not any(reach(word) for c in found for word in c.free)  # outside: ask again


_MATCHERS = {"exact": _match_exact, "bash_signature": _match_signature}

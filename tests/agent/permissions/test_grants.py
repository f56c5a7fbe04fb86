"""Stored grants: ``exact`` and ``bash_signature`` v1 rules, and ``matches`` failing closed."""

from __future__ import annotations

from typing import Any

import pytest

from shard.agent.permissions.grants import canonical, exact_rule, matches, signature_rule
from shard.agent.permissions.shell import Signature, analyze


def bash(command: str) -> dict[str, Any]:
    return {"command": command}


def grant_for(command: str) -> dict[str, Any]:
    found = analyze(command)
    assert found is not None
    return signature_rule(found)


# --- exact -------------------------------------------------------------------------------------


def test_exact_rule_matches_the_same_input_in_any_key_order() -> None:
    """Covers: R9.5.9. An exact grant stores canonical JSON, so the same input matches again whatever
    the order of its keys, at any depth."""
    rule = exact_rule(
        "write", {"path": "a.txt", "content": "x", "opts": {"b": 1, "a": [1, {"y": 2, "x": 1}]}}
    )
    again = {"opts": {"a": [1, {"x": 1, "y": 2}], "b": 1}, "content": "x", "path": "a.txt"}
    assert matches(rule, "write", again)
    assert rule["input"] == canonical(again)


@pytest.mark.parametrize(
    "other",
    [
        {"path": "a.txt", "content": "y"},
        {"path": "a.txt"},
        {"path": "a.txt", "content": "x", "extra": None},
        {"path": "A.txt", "content": "x"},
        {"path": "a.txt", "content": "x "},
        {"path": "a.txt", "content": ["x"]},
        {},
    ],
)
def test_exact_rule_any_value_difference_does_not_match(other: dict[str, Any]) -> None:
    """Covers: R9.5.9. allow_always never widens: any added, removed or changed value is a new request."""
    rule = exact_rule("write", {"path": "a.txt", "content": "x"})
    assert not matches(rule, "write", other)


@pytest.mark.parametrize(
    ("stored", "asked"), [(1, 1.0), (1, True), (0, False), ("1", 1), (None, 0), ([1], [1, 1])]
)
def test_exact_rule_distinguishes_json_types(stored: Any, asked: Any) -> None:
    """Covers: R9.5.9. 1, 1.0, true and "1" are different inputs; an exact grant for one is not one for
    the others."""
    rule = exact_rule("t", {"v": stored})
    assert matches(rule, "t", {"v": stored})
    assert not matches(rule, "t", {"v": asked})


def test_exact_rule_for_another_tool_does_not_match() -> None:
    """Covers: R9.5.9. The tool is part of the grant: the same input for another tool is not allowed."""
    rule = exact_rule("bash", {"command": "ls"})
    assert matches(rule, "bash", {"command": "ls"})
    assert not matches(rule, "bash2", {"command": "ls"})
    assert not matches(rule, "write", {"command": "ls"})


def test_exact_rule_is_not_a_signature_grant() -> None:
    """Covers: R9.5.9. An exact grant for `git status` does not allow `git status && git status` or a
    re-spaced command, although a signature grant would."""
    rule = exact_rule("bash", bash("git status"))
    assert matches(rule, "bash", bash("git status"))
    assert not matches(rule, "bash", bash("git status && git status"))
    assert not matches(rule, "bash", bash("git  status"))


# --- bash_signature ----------------------------------------------------------------------------


def test_signature_rule_records_sorted_unique_executables_and_flags() -> None:
    """Covers: R9.5.16. A v1 rule records each (executable, flags) once, with flags sorted."""
    rule = signature_rule(
        [Signature("ls", ("-a", "-l")), Signature("git status", ()), Signature("ls", ("-a", "-l"))]
    )
    assert rule == {
        "kind": "bash_signature",
        "version": 1,
        "signatures": [
            {"executable": "git status", "flags": []},
            {"executable": "ls", "flags": ["-a", "-l"]},
        ],
    }
    assert grant_for("ls -z -b -m")["signatures"] == [{"executable": "ls", "flags": ["-b", "-m", "-z"]}]


@pytest.mark.parametrize(
    "command", ["git status", "git status && git status", "git status ; git status", "git  status  some/path"]
)
def test_signature_grant_matches_commands_running_only_granted_signatures(command: str) -> None:
    """Covers: R9.5.17. A grant from `git status` allows commands whose every simple command is
    `git status` without flags, whatever its other arguments."""
    assert matches(grant_for("git status"), "bash", bash(command))


@pytest.mark.parametrize(
    "command",
    [
        "git status --short",
        "git status -s",
        "git status; rm -rf x",
        "git status | sh",
        "git status && $(rm x)",
        "git push",
        "git",
        "PATH=/x git status",
        "git status > f",
        "git status >> f",
        "eval git status",
        "if true; then git status; fi",
        "git -C other status",
        "./git status",
    ],
)
def test_signature_grant_rejects_anything_else(command: str) -> None:
    """Covers: R9.5.17. Another flag set, another executable or subcommand, an environment prefix, a
    file redirection or anything the analyser refuses does not match."""
    assert not matches(grant_for("git status"), "bash", bash(command))


def test_signature_grant_with_several_commands_matches_any_arrangement() -> None:
    """Covers: R9.5.17. A grant from `ls -la | grep foo` records both signatures; any command running
    only those (in any order, any arguments) matches, but a grep with a flag does not."""
    rule = grant_for("ls -la | grep foo")
    assert matches(rule, "bash", bash("grep bar | ls -la"))
    assert matches(rule, "bash", bash("ls -la dir; ls -la"))
    assert matches(rule, "bash", bash("grep x"))
    assert not matches(rule, "bash", bash("grep -v x | ls -la"))
    assert not matches(rule, "bash", bash("ls -l"))
    assert not matches(rule, "bash", bash("ls -la | grep x | wc -l"))


def test_signature_flags_are_an_exact_set() -> None:
    """Covers: R9.5.16. The flag set must be equal: a subset or a superset of the recorded flags does
    not match; the order in which flags are written does not matter."""
    rule = grant_for("ls -l -a")
    assert matches(rule, "bash", bash("ls -a -l"))
    assert not matches(rule, "bash", bash("ls -l"))
    assert not matches(rule, "bash", bash("ls -l -a -R"))
    assert not matches(rule, "bash", bash("ls"))


def test_signature_rule_only_applies_to_bash() -> None:
    """Covers: R9.5.17. A signature rule is about bash commands; another tool never matches it."""
    rule = grant_for("ls")
    assert matches(rule, "bash", bash("ls"))
    assert not matches(rule, "shell", bash("ls"))
    assert not matches(rule, "write", bash("ls"))


@pytest.mark.parametrize("args", [{}, {"command": None}, {"command": 5}, {"command": ["ls"]}, {"cmd": "ls"}])
def test_signature_rule_without_a_command_string_does_not_match(args: dict[str, Any]) -> None:
    """Covers: R9.5.15. Arguments without a command string never match a signature rule."""
    assert not matches(grant_for("ls"), "bash", args)


def test_signature_rule_with_no_signatures_matches_nothing() -> None:
    """Covers: R9.5.17. An empty signature list allows no command at all."""
    rule = {"kind": "bash_signature", "version": 1, "signatures": []}
    assert not matches(rule, "bash", bash("ls"))


# --- fail closed -------------------------------------------------------------------------------

_GOOD = {"kind": "bash_signature", "version": 1, "signatures": [{"executable": "ls", "flags": []}]}


def test_the_reference_rule_matches() -> None:
    """The well-formed rule the malformed variants below derive from does match `ls`."""
    assert matches(_GOOD, "bash", bash("ls"))


@pytest.mark.parametrize(
    "rule",
    [
        {**_GOOD, "kind": "bash_signature_v2"},
        {**_GOOD, "kind": "Exact"},
        {**_GOOD, "kind": None},
        {k: v for k, v in _GOOD.items() if k != "kind"},
        {**_GOOD, "version": 2},
        {**_GOOD, "version": 0},
        {**_GOOD, "version": "1"},
        {**_GOOD, "version": None},
        {k: v for k, v in _GOOD.items() if k != "version"},
        {k: v for k, v in _GOOD.items() if k != "signatures"},
        {**_GOOD, "signatures": None},
        {**_GOOD, "signatures": "ls"},
        {**_GOOD, "signatures": 3},
        {**_GOOD, "signatures": {"executable": "ls", "flags": []}},
        {**_GOOD, "signatures": [{"executable": "ls"}]},
        {**_GOOD, "signatures": [{"flags": []}]},
        {**_GOOD, "signatures": [{"executable": "ls", "flags": "-l"}]},
        {**_GOOD, "signatures": [{"executable": "ls", "flags": ""}]},
        {**_GOOD, "signatures": [{"executable": "ls", "flags": None}]},
        {**_GOOD, "signatures": [{"executable": "ls", "flags": [1]}]},
        {**_GOOD, "signatures": [{"executable": 5, "flags": []}]},
        {**_GOOD, "signatures": [{"executable": ["ls"], "flags": []}]},
        {**_GOOD, "signatures": [{"executable": "ls", "flags": []}, "ls"]},
        {**_GOOD, "signatures": [{"executable": "ls", "flags": []}, None]},
        {**_GOOD, "signatures": [["ls", []]]},
        {"kind": "exact", "tool": "bash"},
        {"kind": "exact", "input": canonical(bash("ls"))},
        {"kind": "exact", "tool": "bash", "input": bash("ls")},
        {"kind": "exact", "tool": ["bash"], "input": canonical(bash("ls"))},
        {"kind": "exact", "tool": None, "input": canonical(bash("ls"))},
        {},
    ],
)
def test_unknown_or_malformed_rules_never_match(rule: Any) -> None:
    """Covers: R9.5.15. An unknown kind, an unknown version, a missing key or a wrong type fails closed:
    no match, no exception."""
    assert matches(rule, "bash", bash("ls")) is False


@pytest.mark.parametrize("rule", [None, "exact", 1, ["exact"], ("exact", "bash"), b"{}"])
def test_non_dict_rules_never_match(rule: Any) -> None:
    """Covers: R9.5.15. A rule that is not an object at all never matches."""
    assert matches(rule, "bash", bash("ls")) is False


@pytest.mark.parametrize("kind", [["exact"], {"k": "exact"}, ["bash_signature"]])
def test_unhashable_kind_fails_closed(kind: Any) -> None:
    """Covers: R9.5.15. A kind of the wrong JSON type (an array, an object) is malformed: no match, and
    no exception escaping into the permission gate."""
    rule = {**_GOOD, "kind": kind}
    assert matches(rule, "bash", bash("ls")) is False


def test_boolean_version_is_not_version_one() -> None:
    """Covers: R9.5.15. `true` is not the version number 1 (wire types are strict): a rule with
    version true is malformed and must not match."""
    assert matches({**_GOOD, "version": True}, "bash", bash("ls")) is False


def test_exact_kind_rule_is_read_only_by_the_exact_matcher() -> None:
    """Covers: R9.5.15. An exact rule is interpreted only by the exact matcher: a rule of kind exact
    carrying signature fields does not act as a signature grant."""
    rule = {"kind": "exact", "tool": "bash", "input": canonical(bash("ls")), "version": 1, "signatures": []}
    assert matches(rule, "bash", bash("ls"))
    assert not matches(rule, "bash", bash("ls -la"))

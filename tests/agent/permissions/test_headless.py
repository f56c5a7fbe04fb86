"""HeadlessPolicy: what becomes of a request nobody can answer — a pure table, no board, no clock."""

from __future__ import annotations

import pytest

from shard.agent.permissions.headless import HeadlessPolicy


@pytest.mark.parametrize(
    ("name", "applies"), [("deny", False), ("allow_if_rule_matches", True), ("queue", True)]
)
def test_stored_grants_apply_unless_the_policy_is_deny(name: str, applies: bool) -> None:
    """Covers: R10.1.5. Under deny nothing that needs approval runs unattended, not even
    what a stored grant covers; the other policies let the grants through."""
    assert HeadlessPolicy(name).grants_apply is applies


@pytest.mark.parametrize(
    ("name", "asked_headless", "final", "at_once"),
    [
        ("deny", True, False, True),  # asked with nobody there
        ("deny", False, True, True),  # the last responder is gone for good (end of stdin)
        ("deny", False, False, False),  # a daemon client dropped and may come back: wait for it
        ("allow_if_rule_matches", True, False, True),
        ("allow_if_rule_matches", False, True, True),
        ("allow_if_rule_matches", False, False, False),
        ("queue", True, False, False),  # queue always waits, until an answer or the timeout
        ("queue", False, True, False),
        ("queue", True, True, False),
    ],
)
def test_when_a_request_nobody_can_answer_is_settled_at_once(
    name: str, asked_headless: bool, final: bool, at_once: bool
) -> None:
    """Covers: R10.1.5, R6.4.23, R6.4.24. deny and allow_if_rule_matches settle at once when the request was
    asked with nobody there or nobody can come back; queue never does (it waits for the timeout)."""
    policy = HeadlessPolicy(name, 1.0)
    assert policy.settles_at_once(asked_headless=asked_headless, final=final) is at_once

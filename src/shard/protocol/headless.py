"""The headless policies (DESIGN §6, PROTOCOL §6.4): what becomes of a request nobody can answer.
Spelled once, here; stdlib only, so the command line and an agent definition can check a name
without loading the message models."""

from __future__ import annotations

from typing import Literal, get_args

HeadlessPolicy = Literal["deny", "allow_if_rule_matches", "queue"]
HEADLESS_POLICIES: tuple[HeadlessPolicy, ...] = get_args(HeadlessPolicy)
# Strictest first: a child's policy is never looser than its parent's (``daemon/jobs/children.py``).
BY_STRICTNESS: tuple[HeadlessPolicy, ...] = ("deny", "queue", "allow_if_rule_matches")

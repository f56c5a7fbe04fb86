"""The headless policy: what becomes of a request nobody can answer (DESIGN §6, PROTOCOL §6.4) — pure.

Nobody can answer when no interactive client is connected (``shard run``; ``shard agent --stdio``
once stdin is closed; a daemon runtime whose last responder left). Then, for permission and UI
requests alike:

* ``deny`` (default): settled at once — denied, or dismissed (``null``) — and stored grants do not
  apply either: nothing that needs approval runs unattended.
* ``allow_if_rule_matches``: a stored grant still allows a call; anything that would ask is settled
  at once like ``deny``.
* ``queue``: the request stays open (it is in ``sync.pending_requests``) until someone answers it or
  the headless timeout passes; then ``error {TIMEOUT}`` and it is denied or dismissed.

A request that was asked while someone could answer, whose responders then left and may come back
(a daemon client that dropped), waits for them until the headless timeout whatever the policy; when
nobody can ever come back (end of stdin) the policy decides at once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HeadlessPolicy:
    name: str = "deny"  # one of shard.protocol.headless.HEADLESS_POLICIES (--headless-policy)
    timeout: float = 300.0  # seconds: [permissions] headless_timeout

    @property
    def grants_apply(self) -> bool:
        """Do stored grants allow a call while nobody could approve it?"""
        return self.name != "deny"

    def settles_at_once(self, *, asked_headless: bool, final: bool) -> bool:
        """Is a request nobody can answer settled now (rather than waiting for the timeout)?

        ``asked_headless``: nobody could answer when it was asked; ``final``: nobody ever can."""
        return self.name != "queue" and (asked_headless or final)

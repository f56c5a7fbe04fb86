"""What the wire carries in a person's words (``shard.protocol.words``; issue 26 item 10): token
counts with correct units at every boundary, and who answered a request — by name, "you", or what
closed it — never a connection id. The web client's twin (``static/js/words.js``) is held to the
same table by ``tests/browser/test_modules.py``."""

from __future__ import annotations

import pytest

from shard.protocol.words import answerer, permission_outcome, status, tokens, ui_outcome

# Shared with the web client's test: the same counts must read the same there.
TOKEN_CASES = [
    (0, "0"),
    (999, "999"),
    (1000, "1k"),
    (1049, "1.05k"),
    (1200, "1.2k"),
    (9_995, "10k"),
    (12_500, "12.5k"),
    (253_000, "253k"),
    (999_499, "999k"),
    (999_999, "1M"),
    (1_000_000, "1M"),
    (1_250_000, "1.25M"),
    (253_437_200, "253M"),
    (999_999_999, "1B"),
    (1_500_000_000, "1.5B"),
]


@pytest.mark.parametrize(("count", "shown"), TOKEN_CASES)
def test_token_counts_read_with_their_unit(count, shown):
    """At most three significant digits with k / M / B, rounded half up; never "1000k" (that is
    1M), never "253437.2k" (the web client's old formatter on 253,437,200 tokens)."""
    assert tokens(count) == shown


def test_a_fractional_count_is_rounded_to_a_whole_token():
    assert tokens(999.4) == "999"
    assert tokens(999.5) == "1k"


def test_a_connection_id_is_never_shown_as_a_name():
    """Covers: R9.5.14"""
    assert answerer("websocket-client-7", "Chrome on Linux") == "Chrome on Linux"
    assert answerer("websocket-client-7", None) == "a web client"
    assert answerer("unix-client-3", None) == "a local client"
    assert answerer("unix-client-3", "terminal (pid 42)", mine=True, me="this terminal") == "this terminal"


@pytest.mark.parametrize(
    ("intent", "source", "label", "mine", "said"),
    [
        ("allow", "websocket-client-7", "Chrome on Linux", False, "Allowed by Chrome on Linux"),
        ("allow_always", "unix-client-2", "my-bot", False, "Always allowed by my-bot"),
        ("persist", "unix-client-2", "terminal (pid 9)", True, "Always allowed by you"),
        ("deny", "unix-client-2", "terminal (pid 9)", False, "Denied by terminal (pid 9)"),
        ("deny", "headless", None, False, "Denied by the headless policy"),
        ("deny", "timeout", None, False, "Denied: nobody answered in time"),
        ("deny", "abort", None, False, "Denied: the turn was aborted"),
        ("deny", "runtime-exited", None, False, "Denied: the agent's runtime stopped"),
        ("other", "unix-client-2", "my-bot", False, "Answered by my-bot"),
    ],
)
def test_a_permission_resolution_says_who_answered(intent, source, label, mine, said):
    """Covers: R9.5.13, R9.5.14"""
    assert permission_outcome(intent, source, label, mine=mine) == said


def test_a_ui_resolution_says_who_answered_and_what():
    """Covers: R9.5.22"""
    assert (
        ui_outcome(None, "unix-client-1", "x", mine=True, me="this terminal") == "Dismissed by this terminal"
    )
    assert ui_outcome(["a", "b"], "unix-client-1", "my-bot") == "Answered by my-bot: a, b"
    assert ui_outcome(None, "headless") == "Dismissed by the headless policy"


# Shared with the web client's test: every status of the protocol reads the same there.
STATUS_CASES = [
    ("idle", "idle"),
    ("streaming", "working"),
    ("waiting_for_permission", "waiting for permission"),
    ("waiting_for_ui", "waiting for an answer"),
    ("compacting", "compacting"),
    ("error", "error"),
    ("some_new_state", "some new state"),  # a status a newer server adds: its words, not an identifier
]


@pytest.mark.parametrize(("value", "shown"), STATUS_CASES)
def test_an_agents_status_reads_as_words(value, shown):
    """The status line and the agent list show no wire identifier (``waiting_for_permission``)."""
    assert status(value) == shown


def test_every_status_of_the_protocol_has_its_words():
    from shard.protocol.agents import AGENT_STATUSES

    assert {v for v, _ in STATUS_CASES} >= set(AGENT_STATUSES)
    assert all("_" not in status(v) for v in AGENT_STATUSES)

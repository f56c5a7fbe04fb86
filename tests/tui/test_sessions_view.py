"""The sessions view's rows, folded from a ``session_op list`` result without Textual."""

from __future__ import annotations

from shard.protocol.results import SessionListResult

# Textual and shard.tui's widgets are imported by the tests that use them, not here: see tui_helpers.py


def _session(session_id: str, forks: tuple[str, ...] = (), **extra: object) -> dict[str, object]:
    fork_infos = [
        {"session_id": f, "source_session_id": session_id, "source_entry_id": "m1", "created": 1}
        for f in forks
    ]
    listed = {"forks": fork_infos} if forks else {}  # the wire leaves forks out rather than null
    return {"session_id": session_id, "created": 0, "updated": 1, **listed, **extra}


def test_a_fork_is_shown_once_under_its_source_in_the_servers_order():
    """The server lists a fork on its own and under its source (PROTOCOL §9.2 session_op list);
    the view shows it once, indented under its source, as the web client does.

    Covers: R9.2.43
    """
    from shard.tui.sessions import SessionRow, session_rows

    listing = SessionListResult.model_validate(
        {
            "sessions": [
                _session("s-b", message_count=1, title="newer"),
                _session("s-a", ("s-f",), message_count=4),
                _session("s-f", message_count=4, source_session_id="s-a"),
            ]
        }
    )
    assert session_rows(listing) == [
        SessionRow("s-b", "newer · 1 message"),
        SessionRow("s-a", "4 messages"),
        SessionRow("s-f", "fork of s-a", fork=True),
    ]


def test_no_sessions_no_rows():
    from shard.tui.sessions import session_rows

    assert session_rows(SessionListResult(sessions=[])) == []

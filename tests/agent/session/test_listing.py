"""Session listings read meta.json, a file anyone can edit: whatever it holds, a listing never fails
and never passes on a value of the wrong type."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.session.listing import all_sessions, list_sessions
from shard.protocol.results import SessionListResult

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
_META = st.fixed_dictionaries(
    {},
    optional={
        key: _JSON
        for key in (
            "session_id",
            "cwd",
            "title",
            "created",
            "updated",
            "message_count",
            "source_session_id",
            "source_entry_id",
        )
    },
)


@settings(max_examples=150, deadline=None)
@given(meta=_META | _JSON)
def test_any_meta_json_gives_a_valid_listing(meta):
    """A meta.json of any shape or types: the session is listed from what is valid (else from its
    header), and ``session_op list``'s answer still validates."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        folder = home / "sessions" / "sess-1"
        folder.mkdir(parents=True)
        header = {"id": "ent-1", "parent_id": None, "kind": "header", "ts": 5.0, "version": 1}
        header.update(session_id="sess-1", cwd="/project")
        (folder / "session.jsonl").write_text(json.dumps(header) + "\n")
        (folder / "meta.json").write_text(json.dumps(meta, allow_nan=True))
        (found,) = all_sessions(home, head_bytes=1024)
        assert isinstance(found["session_id"], str)
        assert isinstance(found["updated"], int | float)
        assert found["message_count"] is None or isinstance(found["message_count"], int)
        SessionListResult.model_validate(
            {"sessions": list_sessions(home, found["cwd"] or "/project")}, strict=True
        )

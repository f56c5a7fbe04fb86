"""Where ``session_op fork`` cuts: at the entry asked for, moved past the results of the calls that
entry leaves waiting, so a fork never holds a tool call without the result its source has
(issue 26 item 2). On a real session file, through ``session/fork.py``."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.agent.session.fork import fork
from shard.agent.session.store import SessionStore

TEXT = {"type": "text", "text": "hi"}


def _message(mid: str, role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": mid, "kind": "message", "message": {"id": mid, "role": role, "content": list(blocks)}}


def _call(cid: str) -> dict[str, Any]:
    return {"type": "tool_call", "id": cid, "name": "read", "args": {"path": "a"}}


def _result(cid: str, eid: str) -> dict[str, Any]:
    return {"id": eid, "kind": "tool_result", "tool_call_id": cid, "content": {"kind": "text", "text": cid}}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    header = {"id": "ent-0", "kind": "header", "version": 1, "session_id": "sess-src", "cwd": str(tmp_path)}
    rows = [
        {**header, "model": None, "mode": "build"},
        _message("msg-1", "user", TEXT),
        _message("msg-2", "assistant", TEXT, _call("c1"), _call("c2")),
        {"id": "ent-g", "kind": "grant", "rule": {"kind": "exact", "tool": "read", "input": {"path": "a"}}},
        _result("c1", "msg-3"),
        _result("c2", "msg-4"),
        _message("msg-5", "assistant", TEXT),
        _message("msg-6", "user", TEXT),
        _message("msg-7", "assistant", _call("c3")),  # its runtime died before the result
    ]
    rows[0]["parent_id"] = None
    for previous, row in itertools.pairwise(rows):
        row["parent_id"] = previous["id"]
    for row in rows:
        row["ts"] = 1.0
    path = tmp_path / "sessions" / "sess-src" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    opened = SessionStore.open(path)
    yield opened
    opened.close()


def _forked(store: SessionStore, at: str) -> list[dict[str, Any]]:
    _, session_id, _ = fork(store, at, model=None, mode="build")
    path = store.path.parent / "forks" / session_id / "session.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _shape(rows: list[dict[str, Any]]) -> list[str]:
    """Each copied message row as role/result:call, in order."""
    out = []
    for row in rows:
        if row["kind"] == "message":
            out.append(row["message"]["role"])
        elif row["kind"] == "tool_result":
            out.append(f"result:{row['tool_call_id']}")
    return out


@pytest.mark.parametrize("at", ["msg-2", "msg-3"], ids=["at-the-reply", "between-its-results"])
def test_a_fork_at_a_reply_that_called_tools_takes_their_results_along(store, at):
    """Covers: R9.2.61, R9.2.63"""
    rows = _forked(store, at)
    assert _shape(rows) == ["user", "assistant", "result:c1", "result:c2"]
    assert rows[0]["sourceEntryId"] == at, "provenance names the entry asked for"
    assert any(r["kind"] == "grant" for r in rows)


@pytest.mark.parametrize(
    ("at", "shape"),
    [
        ("msg-1", ["user"]),
        ("msg-4", ["user", "assistant", "result:c1", "result:c2"]),
        ("msg-5", ["user", "assistant", "result:c1", "result:c2", "assistant"]),
        ("msg-7", ["user", "assistant", "result:c1", "result:c2", "assistant", "user", "assistant"]),
    ],
)
def test_a_fork_elsewhere_cuts_where_asked(store, at, shape):
    """Nothing waits (or, at msg-7, no result exists to take: its restore closes the call).

    Covers: R9.2.61
    """
    assert _shape(_forked(store, at)) == shape

"""SessionStore: the append-only JSONL transcript, its torn-tail tolerance and SESSION_CORRUPT."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.session.store import FORMAT_VERSION, SessionStore, find_session, load_entries
from shard.protocol.errors import ErrorCode, ShardError


def new_store(home: Path) -> SessionStore:
    return SessionStore.new(home, cwd="/work/project", model="scripted/demo", mode="build")


def sample_file(home: Path, n: int = 3) -> tuple[SessionStore, bytes]:
    store = new_store(home)
    for i in range(n):
        store.append("message", text=f"entry {i} ✓", n=i)
    store.close()
    return store, store.path.read_bytes()


def assert_corrupt(path: Path, before: bytes) -> ShardError:
    """Load with repair on; it must fail with SESSION_CORRUPT and leave the file as it was."""
    with pytest.raises(ShardError) as info:
        load_entries(path, repair=True)
    assert info.value.code is ErrorCode.SESSION_CORRUPT
    assert path.read_bytes() == before
    assert not path.with_name(path.name + ".torn").exists()
    with pytest.raises(ShardError) as again:
        SessionStore.open(path)
    assert again.value.code is ErrorCode.SESSION_CORRUPT
    assert path.read_bytes() == before
    return info.value


# --- writing -----------------------------------------------------------------------------------


def test_a_new_session_is_created_lazily_on_first_append(tmp_path: Path) -> None:
    """Checks lazy creation: no file until the first append, which writes the header then the
    entry, each one line ending in LF, in a private directory and file."""
    store = new_store(tmp_path)
    assert store.session_id.startswith("sess-")
    assert store.path == tmp_path / "sessions" / store.session_id / "session.jsonl"
    assert not store.path.exists()
    assert store.exists is False
    header = store.header
    assert header["kind"] == "header"
    assert header["parent_id"] is None
    assert (header["version"], header["session_id"], header["cwd"], header["mode"]) == (
        FORMAT_VERSION,
        store.session_id,
        "/work/project",
        "build",
    )

    entry = store.append("message", message={"id": "msg-1"})

    assert store.exists is True
    raw = store.path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert [orjson.loads(line) for line in lines] == [header, entry]
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    store.close()


def test_append_chains_entries(tmp_path: Path) -> None:
    """Checks each appended entry: fresh id (or the given one), parent_id = previous entry's id,
    kind, numeric ts, and the caller's fields; head_id and last() follow."""
    store = new_store(tmp_path)
    a = store.append("message", text="a")
    b = store.append("mode_change", entry_id="ent-fixed", mode="plan", previous="build")
    c = store.append("message", text="c")

    assert a["parent_id"] == store.header["id"]
    assert (b["id"], b["parent_id"], b["kind"], b["mode"]) == ("ent-fixed", a["id"], "mode_change", "plan")
    assert c["parent_id"] == "ent-fixed"
    assert all(isinstance(e["ts"], float) for e in (a, b, c))
    assert a["ts"] <= b["ts"] <= c["ts"]
    assert len({e["id"] for e in store.entries}) == 4
    assert store.head_id == c["id"]
    assert store.last("message") is c
    assert store.last("mode_change") is b
    assert store.last("compaction") is None
    store.sync()
    store.close()
    assert load_entries(store.path) == store.entries


def test_close_then_append_reopens_the_file(tmp_path: Path) -> None:
    """Checks that appending after close() reopens the file in append mode and keeps the chain."""
    store = new_store(tmp_path)
    store.append("message", n=1)
    store.close()
    store.close()  # idempotent
    store.append("message", n=2)
    store.close()
    assert load_entries(store.path) == store.entries
    assert len(store.entries) == 3


def test_a_reopened_session_continues_the_chain(tmp_path: Path) -> None:
    """Checks SessionStore.open: it loads the entries and the next append follows the last one."""
    first, _ = sample_file(tmp_path, n=2)
    reopened = SessionStore.open(first.path)
    assert reopened.session_id == first.session_id
    assert reopened.entries == first.entries
    assert reopened.exists
    entry = reopened.append("message", n=99)
    reopened.close()
    assert entry["parent_id"] == first.entries[-1]["id"]
    assert load_entries(first.path) == [*first.entries, entry]


def test_a_failed_write_is_an_internal_error_and_not_kept(tmp_path: Path) -> None:
    """Checks that when the disk refuses (the file vanished), append raises INTERNAL_ERROR and the
    in-memory entries do not grow."""
    store = new_store(tmp_path)
    store.append("message", n=1)
    store.close()
    store.path.unlink()
    with pytest.raises(ShardError) as info:
        store.append("message", n=2)
    assert info.value.code is ErrorCode.INTERNAL_ERROR
    assert len(store.entries) == 2


_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
_FIELDS = st.dictionaries(
    st.sampled_from(["text", "n", "data", "message", "content", "extra"]), _VALUE, max_size=3
)
_KINDS = st.sampled_from(["message", "tool_result", "mode_change", "model_change", "compaction", "grant"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_KINDS, _FIELDS), max_size=12))
def test_any_sequence_of_appends_reloads_identically(appends: list[tuple[str, dict[str, Any]]]) -> None:
    """Checks that any sequence of appends reloads (and reopens) to exactly the entries written, so
    a valid transcript is never reported corrupt; with no append there is no file."""
    with tempfile.TemporaryDirectory() as d:
        store = new_store(Path(d))
        for kind, fields in appends:
            store.append(kind, **fields)
        store.close()
        if not appends:
            assert not store.path.exists()
            return
        assert load_entries(store.path) == store.entries
        assert SessionStore.open(store.path).entries == store.entries
        assert [e["parent_id"] for e in store.entries] == [None, *(e["id"] for e in store.entries[:-1])]


# --- loading: torn tails ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 5), data=st.data())
def test_truncation_at_any_byte_never_returns_wrong_data(n: int, data: st.DataObject) -> None:
    """Covers: R8.15. A valid file cut at any byte offset (a crash mid-write) loads as exactly the
    entries whose lines are complete; a cut inside the header is SESSION_CORRUPT. Without repair the
    file is untouched; with repair the torn bytes go to session.jsonl.torn, the file is cut back to
    its last complete line, and a later append continues the chain."""
    with tempfile.TemporaryDirectory() as d:
        store, full = sample_file(Path(d), n)
        line_ends = [i + 1 for i, b in enumerate(full) if b == ord("\n")]
        # ids and timestamps make the length vary run to run, so draw a number and fold it in range
        cut = data.draw(st.integers(0, 2**20), label="cut") % (len(full) + 1)
        damaged = full[:cut]
        store.path.write_bytes(damaged)
        complete = sum(1 for end in line_ends if end <= cut)

        if complete == 0:
            assert_corrupt(store.path, damaged)
            return

        assert load_entries(store.path) == store.entries[:complete]
        assert store.path.read_bytes() == damaged

        assert load_entries(store.path, repair=True) == store.entries[:complete]
        clean_end = line_ends[complete - 1]
        torn = store.path.with_name("session.jsonl.torn")
        assert store.path.read_bytes() == full[:clean_end]
        if cut > clean_end:
            assert torn.read_bytes() == full[clean_end:cut] + b"\n"
        else:
            assert not torn.exists()

        reopened = SessionStore.open(store.path)
        entry = reopened.append("message", text="after the crash")
        reopened.close()
        assert load_entries(store.path) == [*store.entries[:complete], entry]


def test_torn_tails_accumulate_in_the_torn_file(tmp_path: Path) -> None:
    """Checks that each repaired torn tail is appended to session.jsonl.torn, one per line."""
    store, full = sample_file(tmp_path, n=1)
    torn = store.path.with_name("session.jsonl.torn")
    store.path.write_bytes(full + b'{"id": "ent-x", "par')
    SessionStore.open(store.path).close()
    store.path.write_bytes(store.path.read_bytes() + b'{"id"')
    SessionStore.open(store.path).close()
    assert torn.read_bytes() == b'{"id": "ent-x", "par\n{"id"\n'
    assert store.path.read_bytes() == full


def test_a_complete_json_last_line_without_lf_is_still_torn(tmp_path: Path) -> None:
    """Checks that a last line lacking its LF is set aside even if it parses: only LF-terminated
    lines are committed entries."""
    store, full = sample_file(tmp_path, n=2)
    store.path.write_bytes(full[:-1])
    assert load_entries(store.path) == store.entries[:-1]


# --- loading: damage ---------------------------------------------------------------------------------


def _edit_line(index: int, change: Callable[[dict[str, Any]], Any]) -> Callable[[list[bytes]], list[bytes]]:
    def apply(lines: list[bytes]) -> list[bytes]:
        entry = orjson.loads(lines[index])
        result = change(entry)
        lines[index] = orjson.dumps(entry if result is None else result)
        return lines

    return apply


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda e: e.pop(key) and None


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda e: e.__setitem__(key, value)


DAMAGE: dict[str, Callable[[list[bytes]], list[bytes]]] = {
    "middle line not JSON": lambda ls: [ls[0], b"{not json", *ls[2:]],
    "middle line not an object": lambda ls: [ls[0], b"[1, 2]", *ls[2:]],
    "blank line in the middle": lambda ls: [ls[0], b"", *ls[1:]],
    "blank last line": lambda ls: [*ls, b""],
    "missing id": _edit_line(1, _drop("id")),
    "numeric id": _edit_line(1, _set("id", 7)),
    "missing kind": _edit_line(2, _drop("kind")),
    "missing parent_id": _edit_line(2, _drop("parent_id")),
    "numeric parent_id": _edit_line(2, _set("parent_id", 3)),
    "missing ts": _edit_line(1, _drop("ts")),
    "boolean ts": _edit_line(1, _set("ts", True)),
    "string ts": _edit_line(1, _set("ts", "2024-01-01")),
    "broken chain": _edit_line(2, _set("parent_id", "ent-elsewhere")),
    "second root": _edit_line(3, _set("parent_id", None)),
    "lines swapped": lambda ls: [ls[0], ls[2], ls[1], *ls[3:]],
    "line deleted": lambda ls: [ls[0], *ls[2:]],
    "header missing": lambda ls: ls[1:],
    "header not a header": _edit_line(0, _set("kind", "message")),
    "header without session_id": _edit_line(0, _drop("session_id")),
    "newer format version": _edit_line(0, _set("version", FORMAT_VERSION + 1)),
    "version missing": _edit_line(0, _drop("version")),
    "version a string": _edit_line(0, _set("version", "1")),
    "empty file": lambda ls: [],
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_damage_other_than_a_torn_tail_is_session_corrupt(tmp_path: Path, damage: str) -> None:
    """Covers: R8.15. Any damage besides a torn last line fails with SESSION_CORRUPT, with or
    without repair, and the file is left byte-identical (no .torn file either)."""
    store, full = sample_file(tmp_path, n=3)
    lines = full.split(b"\n")[:-1]
    if damage == "lines swapped":  # keep the test honest: swapping must actually break the chain
        assert lines[1] != lines[2]
    damaged_lines = DAMAGE[damage](list(lines))
    damaged = b"".join(line + b"\n" for line in damaged_lines)
    store.path.write_bytes(damaged)

    assert_corrupt(store.path, damaged)
    with pytest.raises(ShardError) as info:
        load_entries(store.path)
    assert info.value.code is ErrorCode.SESSION_CORRUPT
    assert str(store.path) in info.value.message


def test_duplicate_entry_ids_are_corrupt(tmp_path: Path) -> None:
    """Covers: R8.15. An entry reusing an earlier id (even with a correct parent link) is corrupt."""
    store = new_store(tmp_path)
    store.append("message", n=1)
    store.append("message", entry_id=store.header["id"], n=2)
    store.close()
    before = store.path.read_bytes()
    err = assert_corrupt(store.path, before)
    assert "duplicate entry id" in err.message


def test_middle_damage_with_a_torn_tail_is_corrupt_and_untouched(tmp_path: Path) -> None:
    """Covers: R8.15. A torn tail is only tolerated in an otherwise sound file: with a bad middle
    line as well, nothing is set aside or cut."""
    store, full = sample_file(tmp_path, n=3)
    lines = full.split(b"\n")
    lines[2] = b'{"broken": '
    damaged = b"\n".join(lines) + b'{"id": "ent-torn'
    store.path.write_bytes(damaged)
    err = assert_corrupt(store.path, damaged)
    assert "line 3" in err.message


def test_the_corrupt_message_names_the_line(tmp_path: Path) -> None:
    """Checks that SESSION_CORRUPT says which line is bad."""
    store, full = sample_file(tmp_path, n=3)
    lines = full.split(b"\n")
    lines[3] = b"nonsense"
    store.path.write_bytes(b"\n".join(lines))
    with pytest.raises(ShardError, match="line 4 is not valid JSON"):
        load_entries(store.path)


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    """Checks that loading a file that does not exist is NOT_FOUND, not SESSION_CORRUPT."""
    with pytest.raises(ShardError) as info:
        load_entries(tmp_path / "nope.jsonl")
    assert info.value.code is ErrorCode.NOT_FOUND


# --- finding sessions ---------------------------------------------------------------------------------


def test_find_session_finds_top_level_sessions_and_forks(tmp_path: Path) -> None:
    """Checks find_session: a top-level session by its directory, a fork under its parent's
    forks/ directory."""
    store, _ = sample_file(tmp_path, n=1)
    fork_dir = tmp_path / "sessions" / store.session_id / "forks" / "sess-fork1"
    fork_dir.mkdir(parents=True)
    (fork_dir / "session.jsonl").write_bytes(b"")

    assert find_session(tmp_path, store.session_id) == store.path
    assert find_session(tmp_path, "sess-fork1") == fork_dir / "session.jsonl"


def test_find_session_unknown_id_is_not_found(tmp_path: Path) -> None:
    """Checks that a well-formed but unknown id (also a bare directory without a transcript) is
    NOT_FOUND."""
    (tmp_path / "sessions" / "sess-empty").mkdir(parents=True)
    for sid in ("sess-0123456789abcdef", "sess-empty"):
        with pytest.raises(ShardError) as info:
            find_session(tmp_path, sid)
        assert info.value.code is ErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    "bad_id",
    [
        "../escape",
        "sess-x/../../escape",
        "agent-0123",
        "sess-",
        "sess-a.b",
        "sess-" + "a" * 200,
        "",
        "sess-ü",
    ],
)
def test_find_session_rejects_non_session_ids(tmp_path: Path, bad_id: str) -> None:
    """Checks that anything that is not a session id is NOT_FOUND before the disk is consulted, so
    an id cannot walk out of the sessions directory to a planted transcript."""
    (tmp_path / "escape").mkdir()
    (tmp_path / "escape" / "session.jsonl").write_bytes(b"planted\n")
    (tmp_path / "sessions" / "sess-x").mkdir(parents=True)
    with pytest.raises(ShardError) as info:
        find_session(tmp_path, bad_id)
    assert info.value.code is ErrorCode.NOT_FOUND
    assert "not a session id" in info.value.message


def test_file_descriptors_are_released(tmp_path: Path) -> None:
    """Checks that close() releases the append descriptor (no leak across many sessions)."""
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        store = new_store(tmp_path)
        store.append("message", n=1)
        store.close()
    assert len(os.listdir("/proc/self/fd")) == before


def test_append_refuses_to_overwrite_the_chain_keys(tmp_path) -> None:
    """An entry's id, parent_id, kind and ts belong to the store; a caller cannot set them."""
    store = SessionStore.new(tmp_path, cwd=str(tmp_path), model=None, mode="build")
    for key in ("id", "parent_id", "kind", "ts"):
        with pytest.raises(ValueError, match=key):
            store.append("note", **{key: "x"})
    assert not store.path.exists()

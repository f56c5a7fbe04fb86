"""``shard sessions`` (list), ``shard sessions show ID`` and ``shard sessions rm ID``.

Every test runs the real command (``shard sessions …``) in a process of its own, on sessions made
by real runs or written here entry by entry, and a real daemon where one is bound to a session.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.cli.sessions import transcript
from shard.testing import (
    AgentProcess,
    DaemonProcess,
    run_shard,
    text_step,
    write_scripted_home,
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return write_scripted_home(tmp_path / "home", [text_step("an answer")], loop=True, record=False)


def _dir(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


def shard(home: Path, cwd: Path, *args: str) -> tuple[int, str, str]:
    """``shard ARGS`` to its end: forked from the test template as ``run_shard`` does (an interpreter
    and its imports less each time: the property test below runs it a hundred times), on a loop of
    its own in a thread, so a synchronous test and an async one alike can wait for it."""
    with ThreadPoolExecutor(1) as pool:
        code, out, err = pool.submit(asyncio.run, run_shard(home, cwd, *args)).result()
    return code, out.decode(), err.decode()


def run_prompt(home: Path, cwd: Path, prompt: str) -> str:
    """One real ``shard run``; returns its session id (from the closing line)."""
    code, _out, err = shard(home, cwd, "run", prompt)
    assert code == 0, err
    return err.rsplit("session ", 1)[1].split("]")[0]


def one_line_failure(result: tuple[int, str, str], says: str) -> None:
    code, out, err = result
    assert code != 0
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert says in err, err


def write_session(
    home: Path,
    session_id: str,
    cwd: Path,
    rows: list[dict[str, Any]],
    *,
    meta: dict[str, Any] | None = None,
    folder: Path | None = None,
    header: dict[str, Any] | None = None,
) -> Path:
    """A session file written entry by entry (ids and the parent chain added here)."""
    folder = folder or home / "sessions" / session_id
    folder.mkdir(parents=True)
    first = header or {"kind": "header", "version": 1, "session_id": session_id}
    entries = [{"cwd": str(cwd), "model": "test/m", "mode": "build", **first}, *rows]
    lines = []
    parent = None
    for n, row in enumerate(entries):
        entry = {"id": row.get("id", f"ent-{n}"), "parent_id": parent, "ts": 1_800_000_000.0 + n, **row}
        parent = entry["id"]
        lines.append(orjson.dumps(entry))
    path = folder / "session.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    if meta is not None:
        (folder / "meta.json").write_bytes(orjson.dumps({"session_id": session_id, "cwd": str(cwd), **meta}))
    return path


def user(text: str, n: int) -> dict[str, Any]:
    mid = f"msg-u{n}"
    return {
        "id": mid,
        "kind": "message",
        "message": {"id": mid, "role": "user", "content": [{"type": "text", "text": text}]},
    }


def assistant(n: int, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    mid = f"msg-a{n}"
    return {
        "id": mid,
        "kind": "message",
        "message": {"id": mid, "role": "assistant", "content": list(blocks)},
        **extra,
    }


# --- list ----------------------------------------------------------------------------------------


async def test_list_shows_every_session_newest_first_with_forks_marked(home, tmp_path):
    """`shard sessions` lists every session of SHARD_HOME — both directories, and a fork, marked as
    one — newest first in an aligned table (id, updated, messages, cwd, title); `--json` gives one
    object a line with the same facts; `--here` and `--cwd DIR` keep one directory's sessions."""
    alpha, beta = _dir(tmp_path, "alpha"), _dir(tmp_path, "beta")
    first = run_prompt(home, alpha, "first question in alpha")
    second = run_prompt(home, beta, "a question in beta")
    agent = await AgentProcess.start(home, alpha, "--session", first)
    try:
        _, sync = await agent.handshake()
        head = sync["live_window"]["messages"][-1]["id"]
        resp, _ = await agent.request(
            {"type": "session_op", "id": "f", "op": "fork", "args": {"from_entry_id": head}}
        )
        fork = resp["data"]["session_id"]
        assert await agent.finish() == 0
    finally:
        await agent.kill()

    code, out, err = shard(home, tmp_path, "sessions")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["SESSION", "UPDATED", "MSGS", "CWD", "TITLE"]
    assert [line.split()[0] for line in lines[1:]] == [fork, second, first]
    cwd_at, title_at = lines[0].index("CWD"), lines[0].index("TITLE")
    fork_line, beta_line, alpha_line = lines[1:]
    assert [line[cwd_at:title_at].strip() for line in lines[1:]] == [str(alpha), str(beta), str(alpha)]
    assert alpha_line[title_at:] == "first question in alpha"
    assert f"(fork of {first}) first question in alpha" in fork_line
    assert alpha_line.split()[3:5] == ["2", str(alpha)]
    assert alpha_line.endswith("first question in alpha")
    assert str(beta) in beta_line
    assert beta_line.endswith("a question in beta")

    code, out, _ = shard(home, tmp_path, "sessions", "--json")
    rows = [orjson.loads(line) for line in out.splitlines()]
    assert [r["session_id"] for r in rows] == [fork, second, first]
    by_id = {r["session_id"]: r for r in rows}
    assert by_id[first]["cwd"] == str(alpha)
    assert by_id[first]["message_count"] == 2
    assert by_id[first]["title"] == "first question in alpha"
    assert by_id[fork]["source_session_id"] == first
    assert "source_session_id" not in by_id[first]
    assert by_id[first]["updated"] >= by_id[first]["created"]

    code, out, _ = shard(home, alpha, "sessions", "--here")
    assert [line.split()[0] for line in out.splitlines()[1:]] == [fork, first]
    code, out, _ = shard(home, alpha, "sessions", "--cwd", str(beta), "--json")
    assert [orjson.loads(line)["session_id"] for line in out.splitlines()] == [second]
    code, out, err = shard(home, alpha, "sessions", "--cwd", str(tmp_path / "nowhere"))
    assert (code, out) == (0, "")
    assert "no sessions for" in err


def test_list_reads_meta_json_not_transcripts(home, tmp_path):
    """The listing takes title and count from meta.json, not from the transcript; a session without
    meta.json is described from the head of its file only — title from the first prompt, message
    count unknown ("?" / null) when the file is longer than that."""
    project = _dir(tmp_path, "project")
    write_session(
        home,
        "sess-meta",
        project,
        [user("what the transcript says", 1)],
        meta={"title": "what meta.json says", "message_count": 7, "created": 1.0, "updated": 2.0},
    )
    filler = "x" * 1000
    rows = [user("the first prompt of a long one", 0)]
    rows += [assistant(n, {"type": "text", "text": filler}) for n in range(1, 200)]
    write_session(home, "sess-long", project, rows)

    code, out, err = shard(home, project, "sessions", "--json")
    assert code == 0, err
    found = {r["session_id"]: r for r in map(orjson.loads, out.splitlines())}
    assert found["sess-meta"]["title"] == "what meta.json says"
    assert found["sess-meta"]["message_count"] == 7
    assert found["sess-long"]["title"] == "the first prompt of a long one"
    assert found["sess-long"]["message_count"] is None
    _, out, _ = shard(home, project, "sessions")
    long_line = next(line for line in out.splitlines() if line.startswith("sess-long"))
    assert long_line.split()[3] == "?"


# --- show ----------------------------------------------------------------------------------------


def test_show_prints_the_conversation_readably(home, tmp_path):
    """`shard sessions show ID` reads a session as a conversation: the prompt, the answer's text and
    thinking, each tool call with the start of its result (errors marked, long output cut), the
    compaction summary, mode/model changes and stored grants; `--json` prints the entries exactly
    as stored, one a line."""
    project = _dir(tmp_path, "project")
    rows = [
        user("list the files please", 1),
        assistant(
            2,
            {"type": "thinking", "text": "I should   look"},
            {"type": "text", "text": "Looking.\n"},
            {"type": "tool_call", "id": "tc-1", "name": "bash", "args": {"command": "seq 10"}},
            model="test/m",
        ),
        {
            "id": "msg-r1",
            "kind": "tool_result",
            "tool_call_id": "tc-1",
            "content": {"kind": "text", "text": "\n".join(str(i) for i in range(1, 11))},
            "is_error": False,
            "exit_code": 0,
        },
        {
            "id": "msg-r2",
            "kind": "tool_result",
            "tool_call_id": "tc-2",
            "content": {"kind": "error", "message": "Permission denied"},
            "is_error": True,
        },
        {
            "kind": "grant",
            "rule": {
                "kind": "bash_signature",
                "version": 1,
                "signatures": [{"executable": "seq", "flags": []}],
            },
        },
        {"kind": "mode_change", "mode": "plan", "previous": "build"},
        {
            "kind": "compaction",
            "index": 1,
            "summary": "The user wanted the files listed.",
            "first_kept_entry_id": "msg-u3",
            "message_range": ["msg-u1", "msg-r2"],
            "tokens_before": 12000,
            "tokens_after": 300,
        },
        user("and now?", 3),
        {"kind": "model_change", "model": "test/m2", "reasoning": None},
        assistant(4, {"type": "text", "text": "Half an ans"}, model="test/m2", incomplete="aborted"),
    ]
    path = write_session(home, "sess-show", project, rows)

    code, out, err = shard(home, tmp_path, "sessions", "show", "sess-show")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "session sess-show"
    assert f"cwd      {project}" in lines
    assert any(line.startswith("created ") and "6 messages" in line for line in lines)
    assert "list the files please" in lines
    assert any(line.startswith("▍you") for line in lines)
    assert any(line.startswith("▍assistant (test/m)") for line in lines)
    assert "(thinking: I should look)" in lines
    assert "Looking." in lines
    assert "» bash command=seq 10" in lines
    assert lines[lines.index("» bash command=seq 10") + 1 :][:2] == ["  │ 1", "  │ 2"]
    assert "  │ 10" not in lines
    assert "  │ … 4 more lines" in lines
    assert "  ✗ Permission denied" in lines
    assert "· always allowed: commands like seq" in lines
    assert "· mode build → plan" in lines
    assert "── compaction 1 · 12,000 → 300 tokens ──" in lines
    assert "The user wanted the files listed." in lines
    assert "· model → test/m2" in lines
    assert lines[-2:] == ["Half an ans", "(stopped by you)"]

    code, out, _ = shard(home, tmp_path, "sessions", "show", "sess-show", "--json")
    assert code == 0
    assert [orjson.loads(line) for line in out.splitlines()] == [
        orjson.loads(line) for line in path.read_bytes().splitlines()
    ]


def test_show_finds_a_fork_and_says_so(home, tmp_path):
    """A fork is shown by its own id, with where it was forked from."""
    project = _dir(tmp_path, "project")
    write_session(home, "sess-src", project, [user("original", 1)])
    fork_folder = home / "sessions" / "sess-src" / "forks" / "sess-fork"
    header = {
        "kind": "checkpoint",
        "artifactKind": "fork",
        "forkId": "fork-1",
        "sourceSessionId": "sess-src",
        "sourceEntryId": "msg-u1",
        "version": 1,
        "session_id": "sess-fork",
    }
    write_session(home, "sess-fork", project, [user("original", 1)], folder=fork_folder, header=header)
    code, out, err = shard(home, tmp_path, "sessions", "show", "sess-fork")
    assert code == 0, err
    assert out.splitlines()[0] == "session sess-fork (fork of sess-src at msg-u1)"


# --- rm ------------------------------------------------------------------------------------------


async def test_rm_removes_a_session_but_not_while_a_process_has_it_open(home, tmp_path):
    """`shard sessions rm ID` is refused (one line, exit 1, nothing removed) while a runtime holds
    the session open; once that process has exited it removes the session's folder, and the session
    is gone from the listing."""
    project = _dir(tmp_path, "project")
    session_id = run_prompt(home, project, "keep me for now")
    folder = home / "sessions" / session_id
    agent = await AgentProcess.start(home, project, "--session", session_id)
    try:
        await agent.handshake()
        one_line_failure(shard(home, project, "sessions", "rm", session_id), "in use by a running shard")
        assert (folder / "session.jsonl").is_file()
        assert await agent.finish() == 0
    finally:
        await agent.kill()

    code, out, err = shard(home, project, "sessions", "rm", session_id)
    assert (code, out) == (0, "")
    assert err.strip() == f"shard: removed session {session_id}"
    assert not folder.exists()
    _, out, _ = shard(home, project, "sessions", "--json")
    assert out == ""
    one_line_failure(shard(home, project, "sessions", "rm", session_id), f"no session '{session_id}'")


async def test_rm_refuses_a_session_a_daemon_agent_is_bound_to(home, tmp_path):
    """A session bound to a daemon agent (state.db) is not removed — with the daemon running and
    after it stopped — and the refusal names the agent and agent.terminate; once the agent is
    forgotten (its first start failed), rm works."""
    project = _dir(tmp_path, "project")
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        resp, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "name": "helper"}
        )
        agent = resp["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent})
        sync = (await client.until(lambda m: m["type"] == "sync"))[-1]
        await client.send({"type": "prompt", "agent_id": agent, "message": "bound"})
        await client.idle(agent_id=agent)
        session_id = sync["session_id"]
        one_line_failure(shard(home, project, "sessions", "rm", session_id), "in use by a running shard")
        resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
        assert resp["data"] == {"deferred": False}
        one_line_failure(
            shard(home, project, "sessions", "rm", session_id),
            f"session {session_id} is bound to daemon agent {agent} (helper)",
        )
        assert "agent.terminate" in shard(home, project, "sessions", "rm", session_id)[2]
    finally:
        await daemon.stop()
    one_line_failure(shard(home, project, "sessions", "rm", session_id), f"daemon agent {agent}")
    assert (home / "sessions" / session_id / "session.jsonl").is_file()

    adopted = write_session(home, "sess-adopted", project, [user("adopt me", 1)]).parent
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        (home / "config.toml").write_text("default_model = [broken\n")
        resp, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "session_id": "sess-adopted"}
        )
        failed = resp["error"]["data"]["agent_id"]
        one_line_failure(shard(home, project, "sessions", "rm", "sess-adopted"), failed)
        resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": failed})
        assert resp["data"]["forgotten"] is True
    finally:
        await daemon.stop()
    code, _, err = shard(home, project, "sessions", "rm", "sess-adopted")
    assert code == 0, err
    assert not adopted.exists()


def test_rm_never_follows_a_link_out_of_the_sessions_folder(home, tmp_path):
    """A session folder that is a symbolic link, or a fork reached through a linked `forks/`, is
    refused: what lies outside the sessions folder is never removed (nor the link)."""
    project = _dir(tmp_path, "project")
    outside = _dir(tmp_path, "outside")
    write_session(home, "sess-target", project, [user("outside", 1)], folder=outside / "sess-target")
    (outside / "precious.txt").write_text("keep\n")
    (home / "sessions").mkdir(exist_ok=True)
    link = home / "sessions" / "sess-link"
    link.symlink_to(outside / "sess-target")
    one_line_failure(shard(home, project, "sessions", "rm", "sess-link"), "is a symbolic link")
    assert link.is_symlink()
    assert (outside / "sess-target" / "session.jsonl").is_file()

    write_session(home, "sess-src", project, [user("source", 1)])
    (home / "sessions" / "sess-src" / "forks").symlink_to(outside)
    one_line_failure(shard(home, project, "sessions", "rm", "sess-target"), "is a symbolic link")
    assert (outside / "sess-target" / "session.jsonl").is_file()
    assert (outside / "precious.txt").read_text() == "keep\n"


def test_rm_of_a_source_with_forks_needs_forks_flag(home, tmp_path):
    """Forks live inside their source's folder: removing the source is refused while it has forks,
    unless --forks says to remove them too; a fork alone can be removed, the source untouched."""
    project = _dir(tmp_path, "project")
    source = write_session(home, "sess-src", project, [user("original", 1)]).parent
    header = {"kind": "checkpoint", "artifactKind": "fork", "sourceSessionId": "sess-src", "version": 1}
    for name in ("sess-f1", "sess-f2"):
        write_session(
            home,
            name,
            project,
            [user("original", 1)],
            folder=source / "forks" / name,
            header={**header, "session_id": name},
        )
    one_line_failure(shard(home, project, "sessions", "rm", "sess-src"), "has 2 forks (sess-f1, sess-f2)")
    assert source.is_dir()
    code, _, err = shard(home, project, "sessions", "rm", "sess-f1")
    assert code == 0, err
    assert not (source / "forks" / "sess-f1").exists()
    assert (source / "session.jsonl").is_file()
    code, _, err = shard(home, project, "sessions", "rm", "sess-src", "--forks")
    assert code == 0, err
    assert "and its fork sess-f2" in err
    assert not source.exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["sessions", "show", "sess-nothere"], "no session 'sess-nothere'"),
        (["sessions", "show", "../../etc"], "not a session id"),
        (["sessions", "rm", "sess-nothere"], "no session 'sess-nothere'"),
        (["sessions", "rm", "/tmp"], "not a session id"),
        (["sessions", "show", "sess-broken"], "cannot be restored"),
        (["sessions", "show"], "the following arguments are required: ID"),
        (["sessions", "remove", "x"], "invalid choice: 'remove'"),
        (["sessions", "--here", "--cwd", "/"], "not allowed with argument"),
    ],
)
def test_every_mistake_is_one_line(home, tmp_path, args, says):
    """Unknown or malformed ids, a damaged session and command-line slips each give one line on
    stderr and a non-zero exit, never a traceback."""
    broken = home / "sessions" / "sess-broken"
    broken.mkdir(parents=True)
    (broken / "session.jsonl").write_text('{"not": "a header"}\n')
    one_line_failure(shard(home, tmp_path, *args), says)


def test_an_empty_home_lists_nothing_quietly(tmp_path):
    """No sessions yet: no table, one line on stderr saying so, exit 0."""
    code, out, err = shard(tmp_path / "fresh-home", tmp_path, "sessions")
    assert (code, out) == (0, "")
    assert err.strip().startswith("shard: no sessions in")


async def test_list_while_a_run_is_in_its_first_turn(tmp_path):
    """A session whose first turn is still running (no meta.json yet) is listed from its head."""
    home = write_scripted_home(
        tmp_path / "home",
        [{"blocks": [{"type": "text", "text": "slow "}, {"type": "pause", "ms": 60_000}]}],
        record=False,
    )
    project = _dir(tmp_path, "project")
    agent = await AgentProcess.start(home, project)
    try:
        _, sync = await agent.handshake()
        await agent.send({"type": "prompt", "message": "in flight"})
        await agent.until_type("message_delta")
        code, out, err = await asyncio.to_thread(shard, home, project, "sessions", "--json")
        assert code == 0, err
        (row,) = map(orjson.loads, out.splitlines())
        assert row["session_id"] == sync["session_id"]
        assert row["title"] == "in flight"
        assert row["message_count"] == 1
    finally:
        await agent.kill()


_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_KINDS = st.sampled_from(
    ["message", "tool_result", "compaction", "mode_change", "model_change", "reasoning_change", "grant", "x"]
)
_FIELDS = st.sampled_from(
    ["message", "content", "is_error", "exit_code", "summary", "index", "tokens_before", "tokens_after",
     "rule", "mode", "previous", "model", "reasoning", "incomplete"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.builds(
            lambda kind, fields, ts: {"kind": kind, "ts": ts, **fields},
            _KINDS,
            st.dictionaries(_FIELDS, _ANY, max_size=5),
            st.floats(allow_nan=True) | st.integers(),
        ),
        max_size=6,
    ),
    blocks=st.lists(_ANY, max_size=4),
)
def test_show_never_fails_on_a_strange_session(rows, blocks):
    """Entries that passed the store's checks (id, kind, ts, chain) but hold anything else — wrong
    types, odd blocks, huge or non-finite times — are shown as well as they can be, never a crash."""
    entries = [
        {"kind": "header", "ts": 1.0, "session_id": "sess-x", "cwd": "/", "model": None, "mode": "build"}
    ]
    entries.append({"kind": "message", "ts": 2.0, "message": {"role": "assistant", "content": blocks}})
    entries += rows
    lines = list(transcript(entries))
    assert lines[0] == "session sess-x"
    assert all(isinstance(line, str) for line in lines)


async def test_a_handed_back_queued_message_shows_as_not_sent_and_restores_as_no_message(home, tmp_path):
    """A ``queue_returned`` entry (queued messages an abort handed back) reads as "not sent" in
    ``shard sessions show``; a restored session skips it — it is a trace, not a message the model
    saw."""
    project = _dir(tmp_path, "project")
    returned = {
        "kind": "queue_returned",
        "reason": "aborted",
        "messages": [
            {"queue_id": "queue-1", "message": "also\nthe port", "behavior": "steer", "queued_at": 1.0},
            {"queue_id": "queue-2", "message": "then the tests", "behavior": "follow_up", "queued_at": 2.0},
        ],
    }
    rows = [user("start", 1), assistant(2, {"type": "text", "text": "work"}, incomplete="aborted"), returned]
    write_session(home, "sess-q", project, rows)
    code, out, err = shard(home, tmp_path, "sessions", "show", "sess-q")
    assert code == 0, err
    assert out.splitlines()[-2:] == [
        "· queued steer not sent (aborted): also the port",
        "· queued follow-up not sent (aborted): then the tests",
    ]
    agent = await AgentProcess.start(home, project, "--session", "sess-q")
    try:
        _, sync = await agent.handshake()
        assert [m["id"] for m in sync["live_window"]["messages"]] == ["msg-u1", "msg-a2"]
        assert sync["queue"] == []
    finally:
        await agent.kill()

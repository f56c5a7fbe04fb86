"""Private files are private (issue 9, item 4): SHARD_HOME is 0700 whichever command creates it, a
looser one is tightened with one line, one owned by another user is refused; every file Shard
writes under it is 0600 and every directory 0700, whatever the umask; a config.toml others may
write (it decides where API keys are sent) is refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from shard.testing import AgentProcess, DaemonProcess, text_step, tool_step, write_scripted_home

from ._support import LOOSE_UMASK, names, other_uid, run_shard, too_open

USER_FILES = ("config.toml", "script.json")  # the test's own files: Shard reads them, never writes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    return root


def _prompt_lines(*messages: dict) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


def test_shard_agent_creates_a_private_home(tmp_path, project):
    """``shard agent --stdio`` under umask 022 creates SHARD_HOME 0700 with sessions/, the session
    directory, session.jsonl and meta.json private."""
    home = tmp_path / "home"
    out = run_shard(
        "agent",
        "--stdio",
        "--model",
        "scripted/demo",
        home=home,
        cwd=project,
        stdin=_prompt_lines({"type": "prompt", "message": "what is here?"}),
    )
    assert out.returncode == 0, out.stderr
    assert {"session.jsonl", "meta.json"} <= names(home)
    assert too_open(home) == {}


def test_shard_run_creates_a_private_home(tmp_path, project):
    """``shard run`` under umask 022 creates SHARD_HOME 0700 and writes its session privately."""
    home = tmp_path / "home"
    out = run_shard("run", "--model", "scripted/demo", "what is here?", home=home, cwd=project)
    assert out.returncode == 0, out.stderr
    assert {"session.jsonl", "meta.json"} <= names(home)
    assert too_open(home) == {}


async def test_shard_daemon_creates_a_private_home(tmp_path, project):
    """``shard daemon`` under umask 022 creates SHARD_HOME 0700; state.db and its WAL and shared-memory
    files, daemon.json, daemon.sock and the sessions of the agents it hosts are private."""
    home = tmp_path / "home"
    daemon = await DaemonProcess.start(home, umask=LOOSE_UMASK)
    try:
        client = await daemon.unix()
        resp, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "model": "scripted/demo"}
        )
        assert resp["success"] is True, resp
        agent = resp["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent})
        await client.send({"type": "prompt", "agent_id": agent, "message": "what is here?"})
        await client.until(lambda m: m.get("type") == "turn_end" and m.get("agent_id") == agent)
        await client.idle(agent_id=agent)
        present = names(home)
        assert {"state.db", "state.db-wal", "state.db-shm", "daemon.json", "daemon.sock"} <= present
        assert {"session.jsonl", "meta.json"} <= present
        assert too_open(home) == {}
    finally:
        await daemon.kill()


async def test_every_session_file_is_private(tmp_path, project):
    """Under umask 022, the files a session grows — the transcript, meta.json (rewritten through a
    temporary file), a bash spill log, a fork and its meta, the set-aside torn tail of a restored
    transcript, the scripted provider's request record — are 0600 in 0700 directories."""
    home = tmp_path / "home"
    write_scripted_home(home, [tool_step("bash", {"command": "seq 1 40000"}), text_step("counted")])
    agent = await AgentProcess.start(home, project, umask=LOOSE_UMASK)
    try:
        _, sync = await agent.handshake()
        await agent.send({"type": "prompt", "message": "count"})
        request = (await agent.until_type("permission_request"))[-1]
        await agent.send(
            {"type": "permission_response", "request_id": request["request_id"], "decision": "allow"}
        )
        read = await agent.idle()
        result = next(m for m in read if m["type"] == "tool_result")
        assert "full output" in orjson.dumps(result).decode(), "the output was spilled to a file"
        user = next(
            m for m in agent.seen if m["type"] == "message_complete" and m["message"]["role"] == "user"
        )
        resp, _ = await agent.request(
            {"type": "session_op", "id": "f", "op": "fork", "args": {"from_entry_id": user["message"]["id"]}}
        )
        assert resp["success"] is True, resp
        assert await agent.finish() == 0
    finally:
        await agent.kill()
    transcript = next(home.glob(f"sessions/{sync['session_id']}/session.jsonl"))
    transcript.write_bytes(transcript.read_bytes() + b'{"id": "torn')  # a crash mid-write
    restored = await AgentProcess.start(home, project, "--session", sync["session_id"], umask=LOOSE_UMASK)
    try:
        await restored.handshake()
        assert await restored.finish() == 0
    finally:
        await restored.kill()
    present = names(home)
    assert {"session.jsonl", "meta.json", "session.jsonl.torn", "requests.jsonl"} <= present
    assert list(home.glob("sessions/*/spill/*")), "a spill log was written"
    assert list(home.glob("sessions/*/forks/*/session.jsonl")), "a fork was written"
    assert list(home.glob("sessions/*/forks/*/meta.json")), "the fork has its meta"
    assert too_open(home, users=USER_FILES) == {}


@pytest.mark.parametrize("command", ["agent", "run"])
def test_a_loose_home_is_tightened_with_one_line(tmp_path, project, command):
    """An existing SHARD_HOME open to group and others (0755) is made 0700 by ``shard agent`` and
    ``shard run``, which say so in exactly one stderr line; the next start says nothing."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    argv = (
        ("agent", "--stdio", "--model", "scripted/demo")
        if command == "agent"
        else ("run", "--model", "scripted/demo", "hi")
    )
    out = run_shard(*argv, home=home, cwd=project)
    assert out.returncode == 0, out.stderr
    notices = [line for line in out.stderr.decode().splitlines() if str(home) in line]
    assert len(notices) == 1, out.stderr
    assert "0755" in notices[0]
    assert "0700" in notices[0]
    assert too_open(home) == {}
    again = run_shard(*argv, home=home, cwd=project)
    assert again.returncode == 0, again.stderr
    assert str(home) not in again.stderr.decode()


@pytest.mark.no_local_runtimes
async def test_the_daemon_tightens_a_loose_home_with_one_line(tmp_path):
    """``shard daemon`` on a 0755 SHARD_HOME makes it 0700 and says so in exactly one line."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    daemon = await DaemonProcess.start(home, umask=LOOSE_UMASK)
    try:
        notices = [line for line in daemon.output if str(home) in line]
        assert len(notices) == 1, daemon.output
        assert "0700" in notices[0]
        assert too_open(home) == {}
    finally:
        await daemon.kill()


def _foreign_home(tmp_path: Path) -> Path:
    """A directory owned by another user (made so as root; otherwise one that already is)."""
    if os.geteuid() != 0:
        return Path("/")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, other_uid(), other_uid())
    return theirs


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (("agent", "--stdio", "--model", "scripted/demo"), 2),
        (("run", "--model", "scripted/demo", "hi"), 2),
        (("daemon", "--port", "0"), 1),
    ],
)
def test_a_home_owned_by_another_user_is_refused(tmp_path, project, argv, code):
    """A SHARD_HOME owned by another user is refused with one clear line (exit 2 for agent and run,
    1 for the daemon) and nothing is written into it."""
    home = _foreign_home(tmp_path)
    before = sorted(p.name for p in home.iterdir())
    out = run_shard(*argv, "--home", str(home), home=home, cwd=project)
    assert out.returncode == code, out.stderr
    lines = out.stderr.decode().strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "another user" in lines[0]
    assert str(home) in lines[0]
    assert out.stdout == b""
    assert sorted(p.name for p in home.iterdir()) == before


def _loose_config(home: Path, how: str) -> Path:
    write_scripted_home(home, [text_step("hi")])
    config = home / "config.toml"
    if how == "group-writable":
        config.chmod(0o664)
    elif how == "world-writable":
        config.chmod(0o646)
    elif os.geteuid() == 0:
        os.chown(config, other_uid(), other_uid())
    else:  # someone else's file in its place
        config.unlink()
        config.symlink_to("/etc/passwd")
    return config


@pytest.mark.parametrize("how", ["group-writable", "world-writable", "another user's"])
@pytest.mark.parametrize(
    ("argv", "code"),
    [(("agent", "--stdio"), 2), (("run", "hi"), 2), (("daemon", "--port", "0"), 1)],
)
def test_a_config_others_can_write_is_refused(tmp_path, project, argv, code, how):
    """config.toml decides where API keys are sent: one that group or others may write, or that
    belongs to another user, is refused with one line that says how to fix it (``chmod 600``);
    no command starts."""
    home = tmp_path / "home"
    config = _loose_config(home, how)
    out = run_shard(*argv, home=home, cwd=project)
    assert out.returncode == code, out.stderr
    lines = out.stderr.decode().strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert str(config) in lines[0]
    assert ("another user" if how == "another user's" else "chmod 600") in lines[0]
    assert out.stdout == b""
    assert not (home / "sessions").exists()
    assert not (home / "state.db").exists()


async def test_the_users_own_files_keep_the_umask(tmp_path, project):
    """Shard never changes the process umask: a file a tool creates for the user under umask 022 is
    0644, as the user's shell would make it."""
    home = tmp_path / "home"
    write_scripted_home(home, [tool_step("bash", {"command": "echo made > made.txt"}), text_step("ok")])
    agent = await AgentProcess.start(home, project, umask=LOOSE_UMASK)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "make it"})
        request = (await agent.until_type("permission_request"))[-1]
        await agent.send(
            {"type": "permission_response", "request_id": request["request_id"], "decision": "allow"}
        )
        await agent.idle()
    finally:
        await agent.kill()
    assert stat.S_IMODE((project / "made.txt").stat().st_mode) == 0o644

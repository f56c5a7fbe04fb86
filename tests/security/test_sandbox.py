"""Boundary: a command the model runs in the sandbox stays in it (issue 19; ``shard.agent.sandbox``).

Every test runs the real ``shard`` (``shard run --sandbox`` or ``shard agent --stdio --sandbox``)
with a scripted model whose bash calls try to get out: write outside the project, see or read a
Shard process, read a key or the user's home, reach the network, outlive an abort. Inside, work
still works: files in the project, a venv and an editable install, a git commit — with no
permission request at all in ``auto``. Without bubblewrap, Shard says so once and asks instead.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.testing import (
    AgentProcess,
    DaemonProcess,
    shard_command,
    text_step,
    tool_step,
    write_scripted_home,
)

KEY = "sk-test-SANDBOXED-0123456789"


def _bash(command: str) -> dict[str, Any]:
    return tool_step("bash", {"command": command})


async def _run(
    home: Path, cwd: Path, steps: list[dict[str, Any]], *flags: str, env: dict[str, str] | None = None
):
    """``shard run --json`` to completion: (exit code, events, stderr)."""
    write_scripted_home(home, [*steps, text_step("done")])
    proc = await asyncio.create_subprocess_exec(
        *shard_command("run", "--json", *flags, "go"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home), "OPENAI_API_KEY": KEY, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    events = [orjson.loads(line) for line in out.splitlines() if line.strip()]
    return proc.returncode, events, err.decode()


def _results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool_result"]


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content.get("text") or content.get("message") or ""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


async def test_writes_land_in_the_project_and_nowhere_else(tmp_path: Path, project: Path):
    """The project is writable; a file beside it, /etc and the private /tmp's outside twin are not;
    the calls ran with no permission request and each tool_call says sandboxed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    code, events, _ = await _run(
        tmp_path / "home",
        project,
        [
            _bash("echo kept > inside.txt && cat inside.txt"),
            _bash(
                f"echo x > {outside}/e.txt; echo x > /etc/escaped.txt; echo x > /tmp/private.txt && ls /tmp"
            ),
            _bash("ls /tmp"),
        ],
        "--sandbox",
    )
    assert code == 0
    assert not [e for e in events if e["type"] == "permission_request"]
    assert [e.get("sandboxed") for e in events if e["type"] == "tool_call"] == [True, True, True]
    _, escapes, listing = _results(events)
    assert (project / "inside.txt").read_text() == "kept\n"
    assert "/etc/escaped.txt: Read-only file system" in _text(escapes)
    assert "e.txt: No such file or directory" in _text(escapes)  # /tmp inside is its own
    assert not (outside / "e.txt").exists()
    assert not Path("/etc/escaped.txt").exists()
    assert not Path("/tmp/private.txt").exists()  # its /tmp was its own
    assert "private.txt" in _text(escapes)
    assert "private.txt" not in _text(listing)  # and each call gets a fresh one


async def test_no_shard_process_key_or_home_is_visible(tmp_path: Path, project: Path):
    """/proc shows the sandbox's own processes only; no environment holds the key; the user's home
    and SHARD_HOME are empty folders inside."""
    home = tmp_path / "home"
    steps = [
        _bash("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"),
        _bash("env"),
        _bash("ls -A $HOME"),
        _bash(f"ls -A {home}"),
    ]
    code, events, _ = await _run(home, project, steps, "--sandbox")
    assert code == 0
    procs, env, user_home, shard_home = (_text(r) for r in _results(events))
    assert "-m shard" not in procs  # neither the runtime nor any other Shard process
    assert "agent --stdio" not in procs
    assert len([line for line in procs.splitlines() if line.strip()]) <= 4  # bwrap's init, bash, tr
    assert KEY not in env
    assert "SHARD_HOME" not in env
    assert set(user_home.split()) <= {".gitconfig", ".config"}
    assert shard_home.split() == []  # config.toml, sessions, grants: none of it


async def test_the_network_is_off(tmp_path: Path, project: Path):
    """A server listening on the host's loopback cannot be reached from inside."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), 3)"
        command = f'python3 -c "{connect}" 2>&1 | tail -1'
        code, events, _ = await _run(tmp_path / "home", project, [_bash(command)], "--sandbox")
    finally:
        server.close()
    assert code == 0
    assert "ConnectionRefusedError" in _text(_results(events)[0])


async def test_a_build_and_a_commit_work_inside(tmp_path: Path, project: Path):
    """A venv, an editable install of a small local package, a git commit: all in the project."""
    (project / "pkg" / "mini").mkdir(parents=True)
    (project / "pkg" / "setup.py").write_text(
        'from setuptools import setup\nsetup(name="mini", packages=["mini"])\n'
    )
    (project / "pkg" / "mini" / "__init__.py").write_text("ANSWER = 42\n")
    steps = [
        _bash("python3 -m venv .venv && .venv/bin/pip install -q --no-index -e ./pkg && echo installed"),
        _bash(".venv/bin/python -c 'import mini; print(mini.ANSWER)'"),
        _bash(
            "git init -q . && git config user.email t@example.invalid && git config user.name T && "
            "git add pkg && git commit -qm 'add pkg' && git log --oneline | wc -l"
        ),
    ]
    code, events, _ = await _run(tmp_path / "home", project, steps, "--sandbox")
    assert code == 0
    installed, imported, committed = (_text(r).strip() for r in _results(events))
    assert installed.endswith("installed"), installed
    assert imported == "42"
    assert committed == "1"
    assert not [e for e in events if e["type"] == "permission_request"]


async def test_an_abort_leaves_nothing_running(tmp_path: Path, project: Path):
    """A command that starts a background sleeper and sleeps itself: abort, and no process of it is
    left on the host."""
    home = tmp_path / "home"
    write_scripted_home(home, [_bash("sleep 317 & sleep 318"), text_step("done")])
    agent = await AgentProcess.start(home, project, "--sandbox", "auto")
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "go"})
        await agent.until(lambda m: m["type"] == "tool_call")
        for _ in range(100):
            if _sleepers():
                break
            await asyncio.sleep(0.05)
        assert _sleepers(), "the command did not start"
        await agent.request({"type": "abort", "id": "a"})
        for _ in range(100):
            if not _sleepers():
                break
            await asyncio.sleep(0.05)
        assert _sleepers() == []
    finally:
        await agent.kill()


def _sleepers() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] in ([b"sleep", b"317"], [b"sleep", b"318"]):
                found.append(int(entry.name))
    return found


async def test_without_bubblewrap_it_says_so_once_and_asks(tmp_path: Path, project: Path):
    """A bwrap that cannot make namespaces: one stderr line, no sandbox capability, and the command
    asks (here nobody can answer: denied, not run)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(stat.S_IRWXU)
    env = {"PATH": f"{fake}:{os.environ['PATH']}"}
    _, events, err = await _run(tmp_path / "home", project, [_bash("touch made.txt")], "--sandbox", env=env)
    assert err.count("no sandbox:") == 1
    assert "No permissions to create new namespace" in err
    assert not (project / "made.txt").exists()
    (result,) = _results(events)
    assert result["is_error"] is True
    assert not [e for e in events if e["type"] == "tool_call" and "sandboxed" in e]
    assert "sandbox" not in events[0]["capabilities"]  # hello claims no sandbox
    assert "denied" in _text(result).lower()


async def test_an_agent_created_with_sandbox_auto_runs_confined_through_the_daemon(
    tmp_path: Path, project: Path
):
    """agent.create's additive ``sandbox`` reaches the runtime the daemon starts: its sync advertises
    the sandbox, its bash runs confined with no permission request, tool_call says sandboxed."""
    home = tmp_path / "home"
    write_scripted_home(
        home, [_bash("echo ok > made.txt; touch /etc/nope 2>&1; cat made.txt"), text_step("done")]
    )
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        created, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "sandbox": "auto"}
        )
        agent = created["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent})
        sync = (await client.until(lambda m: m["type"] == "sync"))[-1]
        await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "go"})
        seen = await client.idle(agent_id=agent)
    finally:
        await daemon.stop()
    assert "sandbox:auto" in sync["capabilities"]
    assert not [m for m in seen if m["type"] == "permission_request"]
    (call,) = [m for m in seen if m["type"] == "tool_call"]
    assert call["sandboxed"] is True
    (result,) = [m for m in seen if m["type"] == "tool_result"]
    assert "Read-only file system" in _text(result)
    assert (project / "made.txt").read_text() == "ok\n"

"""Runtimes are limited (issue 9, item 7): the daemon keeps at most ``--max-runtimes`` (or
``[daemon] max_runtimes``) runtime processes; at the limit it stops the inactive runtime idle
longest to make room, and when none is inactive it answers a retryable RUNTIME_START_FAILED naming
the limit, keeping the durable agent for a later start."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home
from shard.testing.reader import MessageReader

from ._support import run_shard


def _children(pid: int) -> int:
    """Live (not zombie) ``shard agent`` processes whose parent is ``pid``, read from /proc."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) != pid or fields[0] == b"Z":
                continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if b"agent" in argv and b"--stdio" in argv:
            count += 1
    return count


class _ChildWatch:
    """The most runtime children a daemon had at once, sampled from /proc on a thread until
    stopped (/proc has no event to wait for, so it is polled)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _ChildWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.most = max(self.most, _children(self.pid))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.most = max(self.most, _children(self.pid))
            time.sleep(0.002)  # a sampling rate, not a wait for anything


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


async def _listed(client: MessageReader) -> dict[str, dict[str, Any]]:
    resp, _ = await client.request({"type": "agent.list", "id": "list"})
    return {a["agent_id"]: a for a in resp["data"]["agents"]}


def _limit_error(resp: dict[str, Any], limit: int) -> None:
    assert resp["success"] is False, resp
    error = resp["error"]
    assert error["code"] == "RUNTIME_START_FAILED", resp
    assert error["data"]["limit"] == limit
    assert error["data"]["retryable"] is True
    assert str(limit) in error["message"]
    assert "--max-runtimes" in error["message"]


async def test_pipelined_creates_never_pass_the_limit(tmp_path, project):
    """20 agent.create sent at once on one connection to a daemon with --max-runtimes 2: every one
    is answered with success (room is made by stopping the runtime idle longest), and at no moment
    does the daemon have more than 2 runtime processes."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hi")])
    daemon = await DaemonProcess.start(home, "--max-runtimes", "2")
    try:
        client = await daemon.unix()
        creates = [{"type": "agent.create", "id": f"c{n}", "cwd": str(project)} for n in range(20)]
        with _ChildWatch(daemon.proc.pid) as watch:
            await client.send_raw(b"".join(orjson.dumps(c) + b"\n" for c in creates))
            answered: dict[str, dict[str, Any]] = {}
            while len(answered) < len(creates):
                message = await client.next()
                if message.get("type") == "response":
                    answered[message["id"]] = message
        assert all(r["success"] for r in answered.values()), answered
        assert watch.most <= 2, f"{watch.most} runtimes at once"
        agents = await _listed(client)
        assert len(agents) == 20
        assert sum(a["runtime_state"] == "running" for a in agents.values()) <= 2
        newest = answered["c19"]["data"]["agent_id"]
        assert agents[newest]["runtime_state"] == "running"
    finally:
        await daemon.kill()


async def _busy(client: MessageReader, agent: str) -> dict[str, Any]:
    """Attach interactively and prompt: the script's bash call waits for a permission nobody gives."""
    resp, _ = await client.request({"type": "agent.attach", "id": f"at-{agent}", "agent_id": agent})
    assert resp["success"] is True, resp
    await client.send({"type": "prompt", "agent_id": agent, "message": "run it"})
    read = await client.until(lambda m: m.get("type") == "permission_request" and m.get("agent_id") == agent)
    return read[-1]


async def test_at_the_limit_with_no_idle_runtime_a_start_is_refused_until_one_idles(tmp_path, project):
    """With --max-runtimes 2 and two agents waiting for a permission (busy), a third agent's create
    and attach answer RUNTIME_START_FAILED naming the limit, with data {limit: 2, retryable: true};
    the third agent is kept. Once one busy agent is answered and goes idle, the third's attach stops
    that runtime (runtime_state stopped) and succeeds; the stopped agent is restored with its
    conversation on its next attach. No more than 2 runtimes ever live."""
    home = tmp_path / "home"
    write_scripted_home(home, [tool_step("bash", {"command": "echo one"}), text_step("done")])
    daemon = await DaemonProcess.start(home, "--max-runtimes", "2")
    try:
        client = await daemon.unix()
        with _ChildWatch(daemon.proc.pid) as watch:
            ids = []
            for n in range(2):
                resp, _ = await client.request({"type": "agent.create", "id": f"c{n}", "cwd": str(project)})
                ids.append(resp["data"]["agent_id"])
            first, second = ids
            request = await _busy(client, first)
            await _busy(client, second)

            resp, seen = await client.request({"type": "agent.create", "id": "c3", "cwd": str(project)})
            _limit_error(resp, 2)
            third = resp["error"]["data"]["agent_id"]
            assert any(m.get("type") == "agent_spawned" and m["agent_id"] == third for m in seen)
            assert (await _listed(client))[third]["runtime_state"] == "stopped"
            resp, _ = await client.request({"type": "agent.attach", "id": "a3", "agent_id": third})
            _limit_error(resp, 2)

            answer = {"type": "permission_response", "agent_id": first, "request_id": request["request_id"]}
            await client.send({**answer, "decision": "allow"})
            await client.idle(agent_id=first)
            resp, _ = await client.request({"type": "agent.attach", "id": "a3b", "agent_id": third})
            assert resp["success"] is True, resp
            agents = await _listed(client)
            assert agents[first]["runtime_state"] == "stopped"
            assert agents[second]["runtime_state"] == "running"
            assert agents[third]["runtime_state"] == "running"

            resp, _ = await client.request({"type": "agent.attach", "id": "again", "agent_id": first})
            assert resp["success"] is True, resp  # the idle third made room
            sync = (await client.until(lambda m: m.get("type") == "sync" and m.get("agent_id") == first))[-1]
            texts = orjson.dumps(sync["live_window"]).decode()
            assert "run it" in texts
            assert "done" in texts
        assert watch.most <= 2, f"{watch.most} runtimes at once"
    finally:
        await daemon.kill()


@pytest.mark.parametrize(("flag", "reaped"), [((), True), (("--max-runtimes", "2"), False)])
async def test_the_limit_comes_from_config_and_the_flag_wins(tmp_path, project, flag, reaped):
    """``[daemon] max_runtimes = 1`` in config.toml limits the daemon (a second agent's start stops
    the first's runtime); ``--max-runtimes 2`` overrides it (both keep running)."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hi")], extra_toml="\n[daemon]\nmax_runtimes = 1\n")
    daemon = await DaemonProcess.start(home, *flag)
    try:
        client = await daemon.unix()
        ids = []
        for n in range(2):
            resp, _ = await client.request({"type": "agent.create", "id": f"c{n}", "cwd": str(project)})
            assert resp["success"] is True, resp
            ids.append(resp["data"]["agent_id"])
        agents = await _listed(client)
        assert agents[ids[0]]["runtime_state"] == ("stopped" if reaped else "running")
        assert agents[ids[1]]["runtime_state"] == "running"
    finally:
        await daemon.kill()


@pytest.mark.parametrize("value", ["0", "-3", '"many"', "1.5"])
def test_a_bad_configured_limit_is_refused(tmp_path, project, value):
    """``[daemon] max_runtimes`` must be a positive integer: anything else stops the daemon at start
    with one line naming the key (exit 1)."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hi")], extra_toml=f"\n[daemon]\nmax_runtimes = {value}\n")
    out = run_shard("daemon", "--port", "0", home=home, cwd=project)
    assert out.returncode == 1, out.stderr
    lines = out.stderr.decode().strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "max_runtimes" in lines[0]


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_a_bad_limit_flag_is_a_usage_error(tmp_path, project, value):
    """``--max-runtimes`` takes a positive integer; anything else is a usage error (exit 2) that
    says so."""
    out = run_shard("daemon", "--port", "0", "--max-runtimes", value, home=tmp_path / "home", cwd=project)
    assert out.returncode == 2, out.stderr
    assert "--max-runtimes" in out.stderr.decode()
    assert "positive" in out.stderr.decode()

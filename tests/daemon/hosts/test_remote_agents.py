"""Agents whose runtimes run on another host over SSH (issue: remote hosts): a real daemon, a real
OpenSSH server on 127.0.0.1 playing the host."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from conftest import absolute_script, host_toml
from shard.testing import DaemonProcess, recorded_requests, text_step, tool_step, write_scripted_home
from shard.testing.disk import small_disk
from shard.testing.sshd import Sshd

# a real sshd, daemons and runtimes on the "host" (so no local runtime: its daemons need no template)
pytestmark = [pytest.mark.slow, pytest.mark.no_local_runtimes]


async def _allow(client, agent_id: str) -> None:
    """Answer the agent's next permission request: allow."""
    request = (await client.until_type("permission_request"))[-1]
    answer = {"type": "permission_response", "agent_id": agent_id, "decision": "allow"}
    await client.send({**answer, "request_id": request["request_id"]})


async def _daemon(tmp_path: Path, sshd, remote: Path, steps: list, extra: str = "") -> DaemonProcess:
    home = write_scripted_home(tmp_path / "home", steps, extra_toml=host_toml(sshd, remote, extra=extra))
    absolute_script(home)
    return await DaemonProcess.start(home)


async def test_a_tool_turn_and_a_permission_on_a_remote_agent(tmp_path, sshd, remote):
    """A remote agent writes a file in its folder on the host after a permission answered by the
    client; its session is on the host, not in the daemon's home; AgentInfo names the host."""
    steps = [tool_step("write", {"path": "a.txt", "content": "from the host"}), text_step("done")]
    daemon = await _daemon(tmp_path, sshd, remote, steps)
    try:
        client = await daemon.unix()
        project = remote / "project"
        resp, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "host": "box"}
        )
        assert resp["success"] is True, resp
        agent_id = resp["data"]["agent_id"]
        resp, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        assert resp["data"]["info"]["host"] == "box"
        await client.send({"type": "prompt", "agent_id": agent_id, "message": "write it"})
        await _allow(client, agent_id)
        events = await client.until(lambda m: m.get("type") == "status" and m.get("status") == "idle")
        assert any(m["type"] == "message_complete" for m in events)
        assert (project / "a.txt").read_text() == "from the host"
        assert list((remote / "home" / "sessions").iterdir()), "the session lives on the host"
        assert not (daemon.home / "sessions").exists() or not list((daemon.home / "sessions").iterdir())
        listed, _ = await client.request({"type": "agent.list", "id": "l"})
        assert [a["host"] for a in listed["data"]["agents"]] == ["box"]
        hosts, _ = await client.request({"type": "host.list", "id": "h"})
        assert hosts["data"] == {"hosts": ["box"]}
    finally:
        await daemon.stop()


async def _create(client, cwd: Path | str, host: str = "box") -> dict:
    resp, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(cwd), "host": host})
    return resp


def _pids_with(text: bytes) -> list[int]:
    """Live processes whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if text in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


async def _gone(text: bytes) -> bool:
    deadline = asyncio.get_running_loop().time() + 20.0
    while asyncio.get_running_loop().time() < deadline:
        if not _pids_with(text):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_dropped_connection_ends_that_runtime_alone_and_the_next_prompt_restores_it(
    tmp_path, sshd, remote
):
    """The host's connection is cut mid-turn (its sshd process killed) while a command runs there:
    clients get agent_exited; the command does not outlive its runtime; a local agent is untouched;
    the next prompt restores the agent from its session on the host, the first prompt neither lost
    nor doubled."""
    marker = f"sleep {300 + os.getpid() % 100}.5"
    steps = [
        tool_step("bash", {"command": marker}),
        text_step("after the drop"),
    ]
    daemon = await _daemon(tmp_path, sshd, remote, steps)
    try:
        client = await daemon.unix()
        agent_id = (await _create(client, remote / "project"))["data"]["agent_id"]
        local = tmp_path / "local"
        local.mkdir()
        resp, _ = await client.request({"type": "agent.create", "id": "l", "cwd": str(local)})
        local_id = resp["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        await client.send({"type": "prompt", "agent_id": agent_id, "message": "first prompt"})
        await _allow(client, agent_id)
        deadline = asyncio.get_running_loop().time() + 90  # the test kit's cap: a loaded machine is slow
        while not _pids_with(marker.encode()):
            assert asyncio.get_running_loop().time() < deadline, "the command never started on the host"
            await asyncio.sleep(0.02)
        for pid in sshd.session_pids():
            os.kill(pid, signal.SIGKILL)
        exited = (
            await client.until(lambda m: m.get("type") == "agent_exited" and m.get("agent_id") == agent_id)
        )[-1]
        assert exited["runtime_state"] == "failed"
        assert await _gone(marker.encode()), "the command outlived its runtime on the host"
        listed, _ = await client.request({"type": "agent.list", "id": "l2"})
        states = {a["agent_id"]: a["runtime_state"] for a in listed["data"]["agents"]}
        assert states[local_id] == "running"
        await client.send({"type": "prompt", "agent_id": agent_id, "message": "second prompt"})
        await client.until(
            lambda m: (
                m.get("type") == "message_complete"
                and m.get("agent_id") == agent_id
                and "after the drop" in str(m.get("message"))
            )
        )
        last = recorded_requests(daemon.home)[-1]
        texts = [str(m) for m in last["messages"]]
        assert sum("first prompt" in t for t in texts) == 1
        assert sum("second prompt" in t for t in texts) == 1
    finally:
        await daemon.stop()


async def test_two_runtimes_on_a_host_share_one_connection(tmp_path, sshd, remote):
    """A second agent on the host goes over the first one's connection: one sshd session process."""
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")])
    try:
        client = await daemon.unix()
        before = len(sshd.session_pids())
        for i in range(2):
            folder = remote / f"p{i}"
            folder.mkdir()
            assert (await _create(client, folder))["success"] is True
        assert len(sshd.session_pids()) == before + 1
    finally:
        await daemon.stop()


def _ssh_masters_of(pid: int) -> list[int]:
    """The ``ssh -M`` children of process ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if int(stat[1]) == pid and argv[0].endswith(b"ssh") and b"-M" in argv:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_a_daemon_killed_outright_takes_its_ssh_connection_with_it(tmp_path, sshd, remote):
    """``ssh -M -N`` waits on its connection and reads nothing: a daemon killed with SIGKILL (no
    ``close()``) left it running, a session held open on the host for as long as the host allowed."""
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")])
    try:
        client = await daemon.unix()
        assert (await _create(client, remote / "project"))["success"] is True
        masters = _ssh_masters_of(daemon.proc.pid)
        assert len(masters) == 1
        daemon.proc.kill()
        await daemon.proc.wait()
        deadline = asyncio.get_running_loop().time() + 20.0
        while _alive(masters[0]):
            assert asyncio.get_running_loop().time() < deadline, "the ssh master outlived its daemon"
            await asyncio.sleep(0.05)
    finally:
        await daemon.stop()


async def test_an_unknown_host_key_is_refused_in_one_line(tmp_path, sshd, remote):
    """A host whose key is not in the known hosts is refused: one line naming the host and the fix;
    nothing is added to the known hosts."""
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    config = sshd.write_client_config(known_hosts=empty, alias="stranger")
    extra = host_toml(sshd, remote, name="stranger", ssh_config=config).replace(
        f'ssh = "{sshd.alias}"', 'ssh = "stranger"'
    )
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")], extra=extra)
    try:
        client = await daemon.unix()
        resp = await _create(client, remote / "project", host="stranger")
        assert resp["success"] is False
        assert resp["error"]["code"] == "RUNTIME_START_FAILED"
        message = resp["error"]["message"]
        assert "host stranger" in message
        assert "host key" in message
        assert "ssh stranger" in message
        assert "\n" not in message
        assert empty.read_text() == ""
    finally:
        await daemon.stop()


async def test_a_host_without_shard_says_how_to_install_it(tmp_path, sshd, remote):
    """The default start (what `shard hosts setup` installs, else shard on the host's PATH) finds no
    shard there: one line naming the host and `shard hosts setup`."""
    extra = host_toml(sshd, remote, name="bare").replace(f'shard = "{sys.executable} -m shard"\n', "")
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")], extra=extra)
    try:
        client = await daemon.unix()
        resp = await _create(client, remote / "project", host="bare")
        assert resp["error"]["code"] == "RUNTIME_START_FAILED"
        assert "host bare" in resp["error"]["message"]
        assert "shard hosts setup bare" in resp["error"]["message"]
    finally:
        await daemon.stop()


async def test_a_host_with_another_protocol_version_is_named(tmp_path, sshd, remote):
    """A shard on the host that speaks another protocol major version is refused at hello."""
    fake = remote / "old-shard"
    fake.write_text(
        '#!/bin/sh\necho \'{"type":"hello","protocol_version":"9.0","capabilities":[]}\'\ncat >/dev/null\n'
    )
    fake.chmod(0o755)
    extra = host_toml(sshd, remote, name="old").replace(
        f'shard = "{sys.executable} -m shard"', f'shard = "{fake}"'
    )
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")], extra=extra)
    try:
        client = await daemon.unix()
        resp = await _create(client, remote / "project", host="old")
        assert resp["error"]["code"] in ("RUNTIME_START_FAILED", "PROTOCOL_ERROR")
        message = resp["error"]["message"]
        assert "host old" in message
        assert "protocol 9.0" in message
        assert "shard hosts setup old" in message
    finally:
        await daemon.stop()


async def test_an_unreachable_host_and_a_refused_key_each_say_so(tmp_path, sshd, remote):
    """Nothing listens on the port: "cannot reach"; another identity: "your key was refused"."""
    other_key = tmp_path / "other_id"
    keygen = await asyncio.create_subprocess_exec(
        "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)
    )
    assert await keygen.wait() == 0
    refused_config = sshd.write_client_config(alias="refused")
    text = refused_config.read_text().replace(str(sshd.identity), str(other_key))
    refused_config.write_text(text)
    closed = tmp_path / "closed_config"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    closed.write_text(sshd.ssh_config.read_text().replace(f"Port {sshd.port}", f"Port {free}"))
    extra = host_toml(sshd, remote, name="refused", ssh_config=refused_config).replace(
        f'ssh = "{sshd.alias}"', 'ssh = "refused"'
    ) + host_toml(sshd, remote, name="closed", ssh_config=closed)
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")], extra=extra)
    try:
        client = await daemon.unix()
        resp = await _create(client, remote / "project", host="closed")
        assert "host closed" in resp["error"]["message"]
        assert "cannot reach" in resp["error"]["message"]
        resp = await _create(client, remote / "project", host="refused")
        assert "host refused" in resp["error"]["message"]
        assert "key was refused" in resp["error"]["message"]
        resp = await _create(client, remote / "project", host="nowhere")
        assert resp["error"]["code"] == "INVALID_REQUEST"
        assert "unknown host" in resp["error"]["message"]
    finally:
        await daemon.stop()


async def test_a_full_disk_on_the_host_names_the_host_and_the_fix(tmp_path, sshd, remote):
    """The host's SHARD_HOME is on a full filesystem: the first prompt's fatal error is one line
    naming the host, the full disk and the fix; the daemon serves on."""
    with small_disk(remote / "home") as disk:
        disk.fill()
        daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")])
        try:
            client = await daemon.unix()
            resp = await _create(client, remote / "project")
            agent_id = resp["data"]["agent_id"]
            await client.request({"type": "agent.attach", "id": "a0", "agent_id": agent_id})
            await client.send({"type": "prompt", "agent_id": agent_id, "message": "hi"})
            error = (await client.until(lambda m: m.get("type") == "error"))[-1]
            assert error["fatal"] is True
            assert error["message"].startswith("host box (box): its disk is full (")
            assert "free space on box, then retry" in error["message"]
            listed, _ = await client.request({"type": "agent.list", "id": "l"})
            assert [a["agent_id"] for a in listed["data"]["agents"]] == [agent_id]
        finally:
            await daemon.stop()


async def test_past_the_servers_max_sessions_another_connection_is_opened(tmp_path, remote):
    """A server that takes 2 sessions a connection (sshd's MaxSessions) and `sessions = 2` in the
    entry: five agents there use three connections, two runtimes each (ssh alone would fall back
    to a connection of its own for every runtime the master's server refuses)."""
    small = Sshd(tmp_path / "small", max_sessions=2).start()
    try:
        daemon = await _daemon(tmp_path, small, remote, [text_step("hi")], extra="sessions = 2")
        try:
            client = await daemon.unix()
            for i in range(5):
                folder = remote / f"p{i}"
                folder.mkdir()
                resp = await _create(client, folder)
                assert resp["success"] is True, resp
            assert len(small.session_pids()) == 3
        finally:
            await daemon.stop()
    finally:
        small.stop()

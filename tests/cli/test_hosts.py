"""``shard hosts list|check|setup`` against a real OpenSSH server on 127.0.0.1 playing the host
(issue: remote hosts, item 5): a host without shard is reported not ready, one command makes it
ready with nothing fetched there, and an agent then runs on it with the shard that setup installed.
The setup from wheels fetched here is test_hosts_setup_wheels.py: a module of its own, so that its
minute of pip runs on another xdist worker than this module (--dist loadscope keeps a module on one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.testing import DaemonProcess, run_shard, text_step, write_scripted_home

pytestmark = pytest.mark.slow  # a real sshd, daemons and runtimes on the "host"


@pytest.mark.long
async def test_setup_makes_a_bare_host_ready_and_an_agent_runs_with_what_it_installed(tmp_path, sshd):
    """check: not ready (no shard there) with the fix named; setup: ready in one command; an agent
    on the host then runs the installed shard (its process runs the host's venv Python)."""
    remote_home = tmp_path / "remote-home"
    project = tmp_path / "project"
    project.mkdir()
    home = write_scripted_home(
        tmp_path / "home", [text_step("hello from the host")], extra_toml=sshd.hosts_entry(remote_home)
    )
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace('script = "script.json"', f'script = "{home / "script.json"}"')
    )
    code, out, _ = await run_shard(home, tmp_path, "hosts", "check", "box")
    assert code == 1
    text = out.decode()
    assert "reachable   yes" in text
    assert "shard       missing  (not installed)" in text
    assert "shard hosts setup box" in text
    code, out, err = await run_shard(home, tmp_path, "hosts", "setup", "box", timeout=300)
    assert code == 0, err.decode()
    assert "ready: agents can run on box" in out.decode()
    assert "protocol 0.1" in out.decode()
    installed = remote_home / "runtime" / "venv" / "bin" / "shard"
    assert installed.exists()
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        resp, _ = await client.request(
            {"type": "agent.create", "id": "c", "cwd": str(project), "host": "box"}
        )
        assert resp["success"] is True, resp
        agent_id = resp["data"]["agent_id"]
        runtimes = [
            p
            for p in Path("/proc").iterdir()
            if p.name.isdigit() and _cmdline(p).startswith(str(remote_home))
        ]
        assert runtimes, "the runtime on the host runs the shard setup installed"
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        await client.send({"type": "prompt", "agent_id": agent_id, "message": "hi"})
        done = await client.until(
            lambda m: m.get("type") == "message_complete" and m["message"].get("role") == "assistant"
        )
        assert "hello from the host" in str(done[-1]["message"])
    finally:
        await daemon.stop()


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


async def test_check_names_an_unknown_host_key_and_an_unknown_host(tmp_path, sshd):
    """A host whose key is not known: not reachable, the reason and the fix in one line, the known
    hosts untouched. A name not in config.toml: exit 2 with the names there are."""
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    stranger = sshd.write_client_config(known_hosts=empty, alias="stranger")
    entry = sshd.hosts_entry(tmp_path / "rh", name="stranger", ssh_config=stranger).replace(
        f'ssh = "{sshd.alias}"', 'ssh = "stranger"'
    )
    home = write_scripted_home(tmp_path / "home", [text_step("x")], extra_toml=entry)
    code, out, _ = await run_shard(home, tmp_path, "hosts", "check", "stranger")
    assert code == 1
    assert "reachable   no" in out.decode()
    assert "host key is not in your known hosts" in out.decode()
    assert empty.read_text() == ""
    code, _, err = await run_shard(home, tmp_path, "hosts", "check", "elsewhere")
    assert code == 2
    assert "no host 'elsewhere'" in err.decode()
    assert "hosts: stranger" in err.decode()
    code, out, _ = await run_shard(home, tmp_path, "hosts", "list")
    assert code == 0
    assert out.decode().startswith("stranger\tstranger")

"""The ssh command lines and what their failures mean (``shard.daemon.hosts.ssh``), in-process."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from shard._hosts import HostConfig
from shard.daemon.hosts import ssh

BOX = HostConfig(name="box", ssh="me@build-box", port=2222, ssh_config="/c/ssh_config", home="~/.shard")


def test_every_connection_forces_a_known_host_key_and_no_prompt():
    """StrictHostKeyChecking=yes and BatchMode=yes come before anything a config file could say
    (ssh takes the first value it is given), for the master, a runtime and a one-off command."""
    sock = Path("/s/x.sock")
    for argv in (
        ssh.master_argv(BOX, sock),
        ssh.command_argv(BOX, sock, "true"),
        ssh.direct_argv(BOX, "true"),
    ):
        assert argv[:5] == ["ssh", "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes"]
        assert argv[argv.index("-F") + 1] == "/c/ssh_config"
        assert argv[argv.index("-p") + 1] == "2222"
        assert argv[argv.index("--") + 1] == "me@build-box"
    master = ssh.master_argv(BOX, sock)
    assert "-M" in master
    assert "ControlPersist=no" in master
    runtime = ssh.command_argv(BOX, sock, "true")
    assert "ControlMaster=no" in runtime
    assert runtime[runtime.index("-S") + 1] == str(sock)


def test_the_runtime_command_quotes_every_word_and_carries_no_key():
    """A folder with spaces and shell characters reaches the host's shell as one word; ``~/`` is the
    host's home; nothing of a key or the config is on the command line (they come on stdin)."""
    args = ["--session", "sess-1", "--cwd", "/srv/a b;$(rm -rf x)", "--agent-id", "agent-1"]
    line = ssh.runtime_command(BOX, args)
    assert "--handoff" in line
    echoed = subprocess.run(
        ["sh", "-c", line.replace("exec ", "printf '[%s]\\n' ", 1)],
        capture_output=True,
        text=True,
        env={"HOME": "/home/me", "PATH": "/usr/bin:/bin"},
    ).stdout.splitlines()
    assert "[/srv/a b;$(rm -rf x)]" in echoed
    assert "[/home/me/.shard]" in echoed  # --home, expanded on the host


def test_the_default_start_prefers_what_setup_installed():
    prelude, start = ssh.shard_command(BOX)
    assert prelude.startswith('S="$HOME"/')
    assert "runtime" in prelude
    assert start == '"$S"'
    own = BOX._replace(shard="/opt/shard/bin/shard --quiet")
    assert ssh.shard_command(own) == ("", "/opt/shard/bin/shard --quiet")


@pytest.mark.parametrize(
    ("stderr", "says"),
    [
        ("Host key verification failed.", "ssh me@build-box` once"),
        ("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@", "CHANGED"),
        ("me@build-box: Permission denied (publickey).", "your key was refused"),
        ("ssh: Could not resolve hostname build-box: Name or service not known", "cannot reach it"),
        ("ssh: connect to host 1.2.3.4 port 2222: Connection refused", "cannot reach it"),
        ("OSError: [Errno 28] No space left on device: '/srv/.shard/sessions'", "its disk is full"),
        ("sh: 1: exec: shard: not found", "shard hosts setup box"),
        ("shard: error: unrecognized arguments: --handoff", "another version"),
        ("the runtime speaks protocol 9.0, this daemon 0.1.0", "protocol 9.0, this daemon 0.1.0"),
    ],
)
def test_each_failure_is_one_line_naming_the_host_and_the_fix(stderr: str, says: str):
    line = ssh.explain(BOX, stderr, 255)
    assert line.startswith("host box (me@build-box): ")
    assert says in line
    assert "\n" not in line


def test_a_long_shard_home_under_a_deep_temp_dir_puts_the_sockets_in_tmp(tmp_path, monkeypatch):
    """The temp dir itself may leave a socket no room (a test runner's TMPDIR): the folder is in /tmp."""
    deep = tmp_path / ("t" * 80)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    folder = ssh.control_dir(tmp_path / ("x" * 90))
    assert folder.parent == Path("/tmp")
    assert len(str(ssh.control_path(folder, BOX, index=9))) < 100


def test_a_long_shard_home_puts_the_sockets_in_a_private_temp_folder(tmp_path):
    short = ssh.control_dir(Path("/h"))
    assert short == Path("/h/ssh")
    deep = tmp_path / ("x" * 90)
    folder = ssh.control_dir(deep)
    assert not str(folder).startswith(str(deep))
    assert len(str(ssh.control_path(folder, BOX))) < 100
    assert ssh.control_path(folder, BOX) != ssh.control_path(folder, BOX._replace(port=22))

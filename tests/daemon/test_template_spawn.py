"""``shard.daemon.template_spawn``: ``shard daemon``'s warm template, spawned with nothing imported but
``os`` (issue 31). What the spawned process is made of — its session, /dev/null as stdin and stdout,
no descriptor of the daemon's, its title — is pinned by ``test_early_template``, through
``start_early``, which spawns the same way."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from shard._home import shard_home
from shard.daemon import template_spawn


def test_the_home_is_the_one_shard_home_resolves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``take_started`` compares it with ``main_daemon``'s ``shard_home``: any difference would let the
    early template go for nothing."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for explicit, env in [
        (None, None),
        (None, "link/./sub/"),
        (None, "~/real"),
        ("link", "elsewhere"),
        ("~/link//x/..", None),
        ("", "real"),
    ]:
        if env is None:
            monkeypatch.delenv("SHARD_HOME", raising=False)
        else:
            monkeypatch.setenv("SHARD_HOME", env)
        assert template_spawn.home_path(explicit) == str(shard_home(explicit)), (explicit, env)


def test_a_started_template_is_handed_over_once_and_leaves_at_the_end_of_its_socket(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHARD_HOME", str(tmp_path))
    monkeypatch.setattr(template_spawn, "_started", None)
    template_spawn.start_for_home(None)
    started = template_spawn.take_spawned()
    assert template_spawn.take_spawned() is None
    assert started is not None
    path, spawned = started
    assert path == str(tmp_path.resolve())
    assert spawned is not None
    pid, fd = spawned
    sock = socket.socket(fileno=fd)
    sock.settimeout(120)
    assert sock.recv(4096) == b'{"ready": true}'
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert f"SHARD_HOME={tmp_path.resolve()}".encode() in environ
    sock.close()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_template_that_cannot_start_is_none_and_leaves_no_descriptor(tmp_path: Path) -> None:
    probe = (
        "import os, sys\n"
        "from shard.daemon import template_spawn\n"
        "sys.executable = sys.argv[1]\n"
        "before = sorted(os.listdir('/proc/self/fd'))\n"
        "assert template_spawn.spawn({'PATH': os.environ['PATH']}, []) is None\n"
        "assert sorted(os.listdir('/proc/self/fd')) == before, (before, os.listdir('/proc/self/fd'))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "no-python")], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr

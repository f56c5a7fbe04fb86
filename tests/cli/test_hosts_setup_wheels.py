"""``shard hosts setup --wheels`` against a real OpenSSH server on 127.0.0.1 playing the host: the
path of a host on another Python or platform, its wheels fetched here (from the package index) and
installed there offline. Apart from test_hosts.py so that its minute of pip runs on another xdist
worker (--dist loadscope keeps a module on one)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shard.testing import run_shard, text_step, write_scripted_home

pytestmark = pytest.mark.slow  # a real sshd, pip fetching and installing shard's wheels


@pytest.mark.long
async def test_setup_with_wheels_installs_from_wheels_fetched_here(tmp_path, sshd):
    """The path a host on another Python or platform takes (forced here with --wheels, on the same
    one): wheels for the host's interpreter fetched on this machine, installed there offline
    (pip --no-index) into its SHARD_HOME; the host is then ready."""
    remote_home = tmp_path / "remote-home"
    entry = sshd.hosts_entry(remote_home) + f'python = "{Path(sys.base_prefix) / "bin" / "python3"}"\n'
    home = write_scripted_home(tmp_path / "home", [text_step("x")], extra_toml=entry)
    code, out, err = await run_shard(home, tmp_path, "hosts", "setup", "--wheels", "box", timeout=600)
    assert code == 0, err.decode()
    assert "fetching its wheels here" in err.decode()
    assert "ready: agents can run on box" in out.decode()
    venv = remote_home / "runtime" / "venv"
    assert (venv / "pyvenv.cfg").exists()
    installed = list((venv / "lib").glob("python3.*/site-packages/shard-*.dist-info"))
    assert installed, "shard was installed from its wheel"
    tree = str(Path(__file__).resolve().parents[2])
    hooks = [p.read_text() for p in (venv / "lib").glob("python3.*/site-packages/*.pth")]
    assert not [h for h in hooks if tree in h], "not an editable path into this tree"

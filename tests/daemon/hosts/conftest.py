"""A real OpenSSH server on 127.0.0.1 playing a remote host, for daemon tests of ``[[hosts]]``.

The host logs in as the user running the tests; what makes it "another machine" is its own
SHARD_HOME and folders (``remote/``), and that the daemon reaches it only through ``ssh``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shard.testing.sshd import Sshd
from shard.testing.wire import wire_checked


@pytest.fixture(autouse=True)
def wire_check() -> Iterator[None]:
    yield from wire_checked()


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = Sshd(tmp_path_factory.mktemp("sshd")).start()
    yield server
    server.stop()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """The host's side: its SHARD_HOME is ``remote/home``, a project is ``remote/project``."""
    root = tmp_path / "remote"
    (root / "project").mkdir(parents=True)
    return root


def host_toml(
    sshd: Sshd, remote: Path, *, name: str = "box", extra: str = "", ssh_config: Path | None = None
) -> str:
    """A [[hosts]] entry for ``sshd``, starting the shard of this checkout there."""
    return "\n".join(
        [
            "",
            "[[hosts]]",
            f'name = "{name}"',
            f'ssh = "{sshd.alias}"',
            f'ssh_config = "{ssh_config or sshd.ssh_config}"',
            f'shard = "{sys.executable} -m shard"',
            f'home = "{remote / "home"}"',
            extra,
            "",
        ]
    )


def absolute_script(home: Path) -> None:
    """The scripted provider's files named by absolute path: the host reads the daemon's config."""
    config = home / "config.toml"
    text = config.read_text()
    text = text.replace('script = "script.json"', f'script = "{home / "script.json"}"')
    text = text.replace('record = "requests.jsonl"', f'record = "{home / "requests.jsonl"}"')
    config.write_text(text)


def no_ssh() -> bool:
    return shutil.which("ssh") is None

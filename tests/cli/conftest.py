"""The real OpenSSH server on 127.0.0.1 that plays the host of ``shard hosts`` (test_hosts.py,
test_hosts_setup_wheels.py): one a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shard.testing.sshd import Sshd


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = Sshd(tmp_path_factory.mktemp("sshd")).start()
    yield server
    server.stop()

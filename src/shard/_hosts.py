"""A ``[[hosts]]`` entry of config.toml, as every layer sees it (stdlib only). Parsed by
``shard.agent.config.hosts``; used by the daemon's launcher (``shard.daemon.hosts``) and the CLI."""

from __future__ import annotations

from typing import NamedTuple

# Where `shard hosts setup` installs Shard on a host: in the host's SHARD_HOME (its ``home``).
SETUP_DIR = "runtime"
DEFAULT_HOME = "~/.shard"


class HostConfig(NamedTuple):
    name: str
    ssh: str
    port: int | None = None
    ssh_config: str | None = None
    shard: str | None = None  # a command line (words split as a shell would); None: the default
    home: str = DEFAULT_HOME
    config: str = "daemon"  # daemon | remote
    # runtimes one connection carries: sshd's MaxSessions (10 unless the server says otherwise);
    # past it another connection is opened
    sessions: int = 10
    python: str = "python3"  # the host's interpreter for `shard hosts setup` (3.11 or later)

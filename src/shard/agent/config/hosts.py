"""``[[hosts]]`` in config.toml: the machines an agent's runtime may run on, reached with the system
``ssh`` (stdlib only, every mistake one :class:`~shard.agent.config.mistakes.Mistake` naming the key).

```toml
[[hosts]]
name = "box"                  # what agent.create's `host` names, and what every client shows
ssh = "me@build-box"          # a destination as ssh takes it: an alias of ~/.ssh/config, user@host
port = 2222                   # optional: ssh's -p
ssh_config = "~/box.conf"     # optional: ssh's -F (another client config than ~/.ssh/config)
shard = "~/bin/shard"         # optional: how shard is started there (default: what `shard hosts
                              # setup` installed, else `shard` on the host's PATH)
home = "~/.shard"             # optional: SHARD_HOME there (sessions live on the host)
config = "daemon"             # daemon (default): the runtime uses this daemon's providers and key;
                              # remote: the host's own config.toml and keys
```
"""

from __future__ import annotations

import re
from typing import Any

from shard._hosts import DEFAULT_HOME, HostConfig
from shard.agent.config.mistakes import KeyPath, Mistake

__all__ = ["HostConfig", "parse_hosts"]

KEYS = ("name", "ssh", "port", "ssh_config", "shard", "home", "config", "sessions", "python")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def parse_hosts(raw: object) -> tuple[HostConfig, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise Mistake(("hosts",), "must be a list of tables ([[hosts]])")
    hosts: list[HostConfig] = []
    for i, table in enumerate(raw):
        host = _host(table, ("hosts", i))
        if any(h.name == host.name for h in hosts):
            raise Mistake(("hosts", i, "name"), f"{host.name!r} is defined twice")
        hosts.append(host)
    return tuple(hosts)


def _host(table: object, at: KeyPath) -> HostConfig:
    if not isinstance(table, dict):
        raise Mistake(at, "must be a table")
    for key, value in table.items():
        if key not in KEYS:
            raise Mistake((*at, key), known={k: k for k in KEYS}, value=value)
    name = _text(table, "name", at, required=True)
    if not NAME.fullmatch(name):
        why = "must be at most 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        raise Mistake((*at, "name"), why)
    ssh = _text(table, "ssh", at, required=True)
    if ssh.startswith("-") or any(c.isspace() for c in ssh):
        # ssh would read a leading '-' as an option: a destination never starts with one
        raise Mistake((*at, "ssh"), f"must be a destination such as user@host, got {ssh!r}")
    port = table.get("port")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536):
        raise Mistake((*at, "port"), f"must be a port number (1 to 65535), got {port!r}")
    sessions = table.get("sessions", 10)
    if not isinstance(sessions, int) or isinstance(sessions, bool) or not 1 <= sessions <= 1000:
        raise Mistake((*at, "sessions"), f"must be the server's MaxSessions (1 to 1000), got {sessions!r}")
    config = _text(table, "config", at) or "daemon"
    if config not in ("daemon", "remote"):
        raise Mistake((*at, "config"), f"must be daemon or remote, got {config!r}")
    return HostConfig(
        name=name,
        ssh=ssh,
        port=port,
        ssh_config=_text(table, "ssh_config", at),
        shard=_text(table, "shard", at),
        home=_text(table, "home", at) or DEFAULT_HOME,
        config=config,
        sessions=sessions,
        python=_text(table, "python", at) or "python3",
    )


def _text(table: dict[str, Any], key: str, at: KeyPath, *, required: bool = False) -> Any:
    if key not in table:
        if required:
            raise Mistake((*at, key), "is required", line_at=at)
        return None
    value = table[key]
    if not isinstance(value, str) or not value or "\0" in value:
        raise Mistake((*at, key), f"must be a non-empty string, got {value!r}")
    return value

"""What the owner configures for the agents the daemon makes: ``[subagents]`` in config.toml and
``shard daemon``'s flags, and the catalog new agents are checked against — read by the CLI and handed
to the daemon as plain values (the daemon's layer may not import the agent's)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shard._hosts import HostConfig
from shard.daemon.catalog import Catalog
from shard.daemon.jobs.children import ChildSpec
from shard.protocol.jobs import LaunchPolicy

# At most 8 tasks per request (and live per parent at once); children and grandchildren, no deeper.
DEFAULT_POLICY = LaunchPolicy(maxTasks=8, maxDepth=2)
# Durable children one parent may have (each is a row of state.db, kept after its runs end).
DEFAULT_MAX_CHILDREN = 64

Definitions = Callable[[str, str], ChildSpec | None]  # (cwd, name) -> the agent definition, if any
Catalogs = Callable[[], Catalog]  # the catalog as config.toml says now
Hosts = Callable[[str], HostConfig | None]  # the [[hosts]] entry of that name, as config.toml says now


@dataclass(frozen=True, slots=True)
class JobSettings:
    policy: LaunchPolicy = field(default_factory=lambda: DEFAULT_POLICY)
    run_timeout: float | None = None  # seconds a run may take before it is timed_out; None: no limit
    max_children: int = DEFAULT_MAX_CHILDREN
    # read by shard.agent, which the daemon's layer may not import: handed in by the CLI
    definitions: Definitions | None = None
    catalog: Catalogs | None = None  # None: nothing checked against a catalog (an in-memory broker)
    hosts: Hosts | None = None  # None: no agent can run on another host

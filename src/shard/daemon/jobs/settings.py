"""What the owner configures for subagent jobs: ``[subagents]`` in config.toml and ``shard daemon``'s
flags, read by the CLI and handed to the daemon as plain values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shard.daemon.jobs.children import ChildSpec
from shard.protocol.jobs import LaunchPolicy

# At most 8 tasks per request (and live per parent at once); children and grandchildren, no deeper.
DEFAULT_POLICY = LaunchPolicy(maxTasks=8, maxDepth=2)

Definitions = Callable[[str, str], ChildSpec | None]  # (cwd, name) -> the agent definition, if any


@dataclass(frozen=True, slots=True)
class JobSettings:
    policy: LaunchPolicy = field(default_factory=lambda: DEFAULT_POLICY)
    run_timeout: float | None = None  # seconds a run may take before it is timed_out; None: no limit
    # read by shard.agent.definitions, which the daemon's layer may not import: handed in by the CLI
    definitions: Definitions | None = None

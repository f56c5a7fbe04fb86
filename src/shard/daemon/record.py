"""An agent's durable identity: the row ``state.db`` keeps for it (``registry.py``) and the
configuration each of its runtimes starts with."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(slots=True)
class AgentRecord:
    agent_id: str
    session_id: str
    cwd: str
    name: str | None = None
    model: str | None = None
    provider: str | None = None
    mode: str | None = None
    tools: list[str] | None = None
    headless_policy: str = "deny"
    parent_agent_id: str | None = None
    depth: int = 0
    adopted: bool = False
    # A managed child's durable, parent-scoped friendly alias (display only, never an id)
    alias: str | None = None
    definition_name: str | None = None
    display_name: str | None = None
    system_prompt: str | None = None  # a delegated child's instructions (its definition's body)
    names: list[str] | None = None  # the friendly-alias pool for this agent's own children
    workspace_id: str | None = None  # the workspace (git worktree) it was made in
    sandbox: str | None = None  # off | ask | auto for its bash; None: config.toml's [sandbox] mode
    host: str | None = None  # the [[hosts]] entry its runtime runs on (over SSH); None: this machine
    # For this daemon's life only, not kept in state.db (see AgentCreate): its runtimes get the
    # subagent tools; terminating it once stopped removes it.
    subagents: bool = True
    ephemeral: bool = False
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None

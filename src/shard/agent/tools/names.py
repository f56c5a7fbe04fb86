"""The names of the tools every runtime may offer, without importing a tool (issue 31).

The daemon checks a new agent's ``tools`` against them (``shard.daemon.catalog``). It used to build
that list from the tools themselves at the first ``agent.create``: importing every tool module, its
parameter models and the subagent tools took 35-40 ms of that create, on the path of a fresh
daemon's first answer. ``tests/agent/tools/test_names.py`` holds these equal to the tools' own names.
"""

from __future__ import annotations

BUILTIN = ("read", "write", "edit", "bash", "grep", "find", "ls")  # registry.builtin_tools, in order
RECALL = "recall"
SUBAGENT = (  # subagents.TOOL_NAMES, a daemon-hosted runtime's
    "subagent_launch",
    "subagent_wait",
    "subagent_steer",
    "subagent_status",
    "subagent_stop",
    "subagent_relaunch",
)

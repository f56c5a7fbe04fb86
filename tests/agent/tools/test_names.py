"""``shard.agent.tools.names``: the daemon's list of tool names is the tools' own (issue 31)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from shard.agent.tools import names
from shard.agent.tools.recall import RecallTool
from shard.agent.tools.registry import builtin_tools
from shard.agent.tools.subagents import TOOL_NAMES


def test_the_names_are_the_names_the_tools_have() -> None:
    """A tool added, renamed or dropped without this list would make the daemon refuse an
    ``agent.create`` naming a tool the runtime has, or accept one it lacks."""
    assert tuple(tool.name for tool in builtin_tools()) == names.BUILTIN
    assert RecallTool.name == names.RECALL
    assert names.SUBAGENT == TOOL_NAMES


def test_the_daemons_catalog_imports_no_tool() -> None:
    """Built at the first create: no tool module (and none of their parameter models) loads."""
    probe = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from shard.agent.config.settings import Config
        from shard.cli.daemon_serve import _build
        tools = _build(Config(home=Path("/nonexistent"))).tools
        assert {"read", "recall", "subagent_launch"} <= tools, tools
        loaded = [m for m in sys.modules if m.startswith("shard.agent.tools.")]
        print(sorted(set(loaded) - {"shard.agent.tools.names"}))
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert ran.stdout.strip() == "[]", ran.stdout

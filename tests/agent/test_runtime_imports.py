"""A runtime imports only the protocol models it reads and sends (issue 31): its commands, events and
results are modules of their own, apart from the orchestrator's commands, the daemon's events and
every other result, which load jobs and workspaces too. Each module cut costs milliseconds of CPU on
every ``shard run`` before its first provider request and in the warm template before it is ready;
this pins the cuts, in a fresh interpreter, on each of those paths."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

# What a runtime never needs before its first request: the daemon's side of the catalog and the
# modules only it brings in.
DAEMON_SIDE = [
    "shard.protocol.commands",
    "shard.protocol.daemon_commands",
    "shard.protocol.events",
    "shard.protocol.daemon_events",
    "shard.protocol.results",
    "shard.protocol.jobs",
    "shard.protocol.workspaces",
    # and what only a remote server's window probe uses (a local one is asked on the event loop)
    "urllib.request",
    "http.client",
]

# Each path imports what it serves with, then reads a prompt and a runtime-only command as a
# runtime does, answers and refuses nothing.
PATHS = {
    "shard run": "import shard.cli.run, shard.agent.runtime, shard.agent.stdio, shard.agent.mcp.host, "
    "shard.agent.providers.openai, shard.agent.providers.anthropic",
    "template": "from shard.cli.forkserver import _preload; _preload([])",
}
READ = (
    "from shard.protocol.codec import parse_command, encode, error_response\n"
    "from shard.protocol.errors import ErrorCode, ShardError\n"
    'parse_command(\'{"type": "prompt", "id": "1", "message": "hi"}\')\n'
    'parse_command(\'{"type": "runtime.sync"}\')\n'
    "encode(error_response(ShardError(ErrorCode.NOT_FOUND, 'x'), id='1'))\n"
)


def _python(code: str, home: Path) -> str:
    """What ``code`` prints in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"SHARD_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    return out.stdout


def _loaded(code: str, home: Path) -> set[str]:
    out = _python(f"{code}\n{READ}import sys, json\nprint(json.dumps(sorted(sys.modules)))", home)
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_runtime_path_loads_none_of_the_daemons_models(path: str, tmp_path: Path) -> None:
    loaded = _loaded(PATHS[path], tmp_path)
    assert "shard.protocol.agent_commands" in loaded  # the path was taken: it parsed a command
    assert [name for name in DAEMON_SIDE if name in loaded] == []


def test_a_runtime_still_names_an_orchestrator_command_it_refuses(tmp_path: Path) -> None:
    code = (
        "from shard.protocol.codec import parse_command\n"
        "from shard.protocol.errors import FrameError\n"
        "try:\n"
        '    parse_command(\'{"type": "agent.list", "id": "7"}\')\n'
        "except FrameError as exc:\n"
        "    print(exc.message)\n"
    )
    assert "orchestrator command" in _python(code, tmp_path)


def test_the_template_imports_the_subagent_tools_after_it_is_ready(tmp_path: Path) -> None:
    """Every runtime of a daemon offers the subagent tools, which speak the daemon's subagent
    commands (~20 ms to import): the template imports them as its first warming step, after ready,
    so a fork from a warmed template does not (and the ready itself does not wait for them)."""
    code = (
        "import sys\n"
        "from shard.cli.forkserver import _preload\n"
        "later = _preload([])\n"
        "ready = 'shard.agent.tools.subagents' in sys.modules\n"
        "later.pop(0)()\n"
        "loaded = [m in sys.modules for m in ('shard.agent.tools.subagents', 'shard.protocol.commands')]\n"
        "print(ready, *loaded)\n"
    )
    assert _python(code, tmp_path).split() == ["False", "True", "False"]  # and not the orchestrator's catalog

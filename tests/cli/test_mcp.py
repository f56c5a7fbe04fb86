"""``shard mcp list``: each configured server started briefly, its tools listed, a failing one one
line; exit 1 when any server did not start, 2 for a config mistake. Real command, real servers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agent.mcp._servers import server_toml
from shard.testing import shard_command, text_step, write_scripted_home


def shard(home: Path, cwd: Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        shard_command(*args),
        cwd=cwd,
        env={**os.environ, "SHARD_HOME": str(home)},
        capture_output=True,
        text=True,
    )
    return done.returncode, done.stdout, done.stderr


def _home(tmp_path: Path, servers: str) -> Path:
    return write_scripted_home(tmp_path / "home", [text_step("x")], extra_toml=servers, record=False)


def test_lists_servers_and_their_tools(tmp_path):
    home = _home(tmp_path, server_toml("demo"))
    code, out, err = shard(home, tmp_path, "mcp", "list")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("demo  stdio  ")
    assert "demo_server.py" in lines[0]
    assert any(
        line.split() == ["demo__add", "(read-only)", "The", "sum", "of", "two", "numbers."] for line in lines
    )
    assert any(line.split()[:2] == ["demo__shout", "Say"] for line in lines)


def test_a_server_that_fails_is_one_line_and_the_status_is_1(tmp_path):
    broken = '\n[[mcp_servers]]\nname = "broken"\ncommand = "no-such-mcp-server"\n'
    home = _home(tmp_path, server_toml("demo") + broken)
    code, out, err = shard(home, tmp_path, "mcp", "list", "--json")
    assert code == 1
    assert err == ""
    demo, failed = (json.loads(line) for line in out.splitlines())
    assert demo["started"] is True
    assert {t["name"]: t["read_only"] for t in demo["tools"]}["demo__add"] is True
    assert failed == {
        "name": "broken",
        "transport": "stdio",
        "target": "no-such-mcp-server",
        "started": False,
        "error": "could not start: no such program: no-such-mcp-server",
        "tools": [],
        "left_out": [],
    }
    code, out, _ = shard(home, tmp_path, "mcp", "list")
    assert code == 1
    assert (
        "broken  stdio  no-such-mcp-server\n  failed: could not start: no such program: no-such-mcp-server"
        in out
    )


def test_no_servers_and_config_mistakes(tmp_path):
    home = _home(tmp_path, "")
    code, out, _ = shard(home, tmp_path, "mcp", "list")
    assert code == 0
    assert out.startswith("no MCP servers: add [[mcp_servers]] to ")
    assert shard(home, tmp_path, "mcp", "list", "--json")[:2] == (0, "")
    bad = _home(tmp_path, '\n[[mcp_servers]]\nname = "x"\n')
    code, out, err = shard(bad, tmp_path, "mcp", "list")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("shard: ")
    assert "mcp_servers[0] needs command (stdio) or url (HTTP)" in err
    code, _, err = shard(home, tmp_path, "mcp")
    assert code == 2
    assert err.count("\n") == 1

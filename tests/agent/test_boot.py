"""The daemon's flags for the runtimes it hosts (DESIGN §2): ``--agent-id`` and
``--system-prompt-file``, through real ``shard agent --stdio`` processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from shard.agent.prompting.definitions import MAX_PROMPT_BYTES
from shard.testing import AgentProcess, recorded_requests, shard_command, text_step, write_scripted_home

HEADING = "## Instructions for this agent"


def _home(tmp_path: Path) -> tuple[Path, Path]:
    home = write_scripted_home(tmp_path / "home", [text_step("done")])
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return home, cwd


async def test_the_system_prompt_file_is_appended_under_its_heading(tmp_path: Path):
    """The file's text ends the system prompt the model gets, under its own heading."""
    home, cwd = _home(tmp_path)
    prompt_file = tmp_path / "child.md"
    prompt_file.write_text("You review diffs. Report only bugs.\n")
    agent = await AgentProcess.start(
        home, cwd, "--agent-id", "agent-abc", "--system-prompt-file", str(prompt_file)
    )
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        await agent.idle()
    finally:
        await agent.kill()
    system = recorded_requests(home)[0]["system"]
    assert system.endswith(f"\n\n{HEADING}\n\nYou review diffs. Report only bugs.")


async def test_without_the_file_the_system_prompt_has_no_such_heading(tmp_path: Path):
    home, cwd = _home(tmp_path)
    agent = await AgentProcess.start(home, cwd)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        await agent.idle()
    finally:
        await agent.kill()
    assert HEADING not in recorded_requests(home)[0]["system"]


def _run(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        shard_command("agent", "--stdio", "--home", str(home), "--cwd", str(cwd), *args),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_system_prompt_file_over_the_bound_is_refused(tmp_path: Path):
    """Over 32 KiB: one stderr line, exit 2 (as a bad flag), and no hello."""
    home, cwd = _home(tmp_path)
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * (MAX_PROMPT_BYTES + 1))
    done = _run(home, cwd, "--system-prompt-file", str(big))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"shard: --system-prompt-file {big} is larger than {MAX_PROMPT_BYTES} bytes\n"


def test_a_missing_system_prompt_file_is_refused(tmp_path: Path):
    home, cwd = _home(tmp_path)
    done = _run(home, cwd, "--system-prompt-file", str(tmp_path / "nope.md"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--system-prompt-file" in done.stderr
    assert "No such file" in done.stderr


def test_a_file_at_the_bound_is_accepted(tmp_path: Path):
    home, cwd = _home(tmp_path)
    edge = tmp_path / "edge.md"
    edge.write_bytes(b"a" * MAX_PROMPT_BYTES)
    done = _run(home, cwd, "--system-prompt-file", str(edge))
    assert done.returncode == 0, done.stderr
    assert '"type":"hello"' in done.stdout


def test_the_daemon_flags_are_hidden_from_help():
    out = subprocess.run(
        shard_command("agent", "--help"), capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "--stdio" in out
    assert "--agent-id" not in out
    assert "--system-prompt-file" not in out

"""A repository's own Python files never run as Shard (``shard._python``).

``python -m`` puts the current folder first on ``sys.path``. The daemon's runtime template and the
runtimes it spawns inherit the daemon's folder, and an SDK client starts ``shard agent --stdio`` in
the agent's: started there with ``-m`` alone, each imported a repository's ``json.py`` or
``argparse.py`` in place of Python's, before any gate asked. Each test plants such modules in a
repository (each touches a marker named after itself, then refuses to load), starts Shard's
processes there as a user would, gets an answer, and finds no marker.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from shard.client.connectors import stdio
from shard.testing import DaemonProcess, text_step, write_scripted_home

# What the daemon's children import after they start: the template (``json``, ``selectors``, then
# the runtime's ``asyncio``, ``argparse``…), a runtime spawned cold, ``shard agent --stdio``.
PLANTED = ("argparse", "asyncio", "json", "selectors", "tomllib", "sqlite3", "subprocess")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    for name in PLANTED:
        (repo / f"{name}.py").write_text(
            f"open({str(markers / name)!r}, 'w').close()\nraise ImportError('planted by the repository')\n"
        )
    (repo / "README.md").write_text("a repository\n")
    return repo


def ran(repository: Path) -> list[str]:
    return sorted(p.name for p in (repository.parent / "markers").iterdir())


@pytest.mark.parametrize("start", ["warm", "cold"])
async def test_a_daemon_started_in_a_repository_runs_none_of_its_modules(
    tmp_path: Path, repository: Path, start: str
) -> None:
    """The daemon typed in the repository: its template (warm) or the runtime it spawns (cold) was
    started there."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hello from the model")], loop=True)
    flags = ("--cold-start",) if start == "cold" else ()
    daemon = await DaemonProcess.start(home, *flags, cwd=repository)
    try:
        client = await daemon.unix()
        created, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(repository)})
        assert created["success"], created
        agent = created["data"]["agent_id"]
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent})
        await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "hi"})
        events = await client.until(lambda m: m.get("type") == "turn_end" and m.get("agent_id") == agent)
        text = "".join(m.get("text_delta", "") for m in events if m.get("type") == "message_delta")
        assert text == "hello from the model"
    finally:
        await daemon.stop()
    assert ran(repository) == []


async def test_an_sdk_client_starting_an_agent_in_a_repository_runs_none_of_its_modules(
    tmp_path: Path, repository: Path
) -> None:
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hello")], loop=True)
    transport = await stdio("--cwd", str(repository), cwd=repository, home=home)()
    try:
        await transport.send(b'{"type": "prompt", "id": "p", "message": "hi"}')
        seen: list[dict] = []
        while not seen or seen[-1].get("type") != "turn_end":
            line = await asyncio.wait_for(transport.recv(), 60)
            assert line is not None, seen
            seen.append(json.loads(line))
        assert seen[0]["type"] == "hello"
        assert "".join(m.get("text_delta", "") for m in seen if m["type"] == "message_delta") == "hello"
    finally:
        await transport.close()
    assert ran(repository) == []


def test_every_python_shard_starts_leaves_the_current_folder_off_its_path() -> None:
    """Every place Shard starts this Python (``sys.executable``) goes through ``_python.module_argv``
    (``-P``): no argv of its sources names ``sys.executable`` and ``-m`` without it."""
    source_root = Path(__file__).parents[2] / "src" / "shard"
    found = []
    for path in source_root.rglob("*.py"):
        text = path.read_text()
        for match in re.finditer(r"sys\.executable,\s*\"-[mc]\"", text):
            found.append(f"{path.relative_to(source_root)}: {match.group(0)}")
    assert found == []
    from shard._python import module_argv

    assert module_argv("shard", "daemon") == [sys.executable, "-P", "-m", "shard", "daemon"]


def test_the_bootstrap_runs_its_python_dash_m_commands_in_the_checkout() -> None:
    """``./shard`` typed in a repository runs ``scripts/bootstrap.sh`` there on its first use: pip,
    venv, compileall and warm_cache (all ``python -m``) must not see that folder first."""
    script = (Path(__file__).parents[2] / "scripts" / "bootstrap.sh").read_text()
    lines = [line.strip() for line in script.splitlines()]
    first_module_run = next(i for i, line in enumerate(lines) if " -m " in line and not line.startswith("#"))
    assert 'cd "$here"' in lines[:first_module_run]

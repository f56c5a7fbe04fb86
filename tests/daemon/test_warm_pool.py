"""Warm starts (issue 16): runtimes forked from the pre-imported template are what spawned ones are —
same environment, working directory, session, descriptors, signal masks, session lock and command
line — and the template follows the configuration, replaces itself when it dies, and never strands
a runtime it forked."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import attach, create_agent, runtime_pids

from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.home import text_step, tool_step
from shard.testing.tools import TEST_TOOLS

PROBE = [*TEST_TOOLS, "shard.testing.tools:ProbeTool"]
pytestmark = pytest.mark.slow


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> list[str]:
    parts = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    while parts and not parts[-1]:
        parts.pop()
    return [p.decode() for p in parts]


def templates_of(daemon: DaemonProcess) -> list[int]:
    """The daemon's live template processes (its children running shard.cli.forkserver)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if _ppid(int(entry.name)) == daemon.proc.pid and "shard.cli.forkserver" in _cmdline(
                    int(entry.name)
                ):
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return found


async def _probe(
    home: Path, project: Path, started: list[DaemonProcess], *flags: str
) -> tuple[dict[str, Any], int, DaemonProcess]:
    write_scripted_home(home, [tool_step("probe", {}), text_step("done")], loop=True, extensions=PROBE)
    daemon = await DaemonProcess.start(home, *flags)
    started.append(daemon)  # killed by the test whatever happens next
    client = await daemon.unix()
    agent = await create_agent(client, project)
    await attach(client, agent)
    await client.send({"type": "prompt", "id": "p", "agent_id": agent, "message": "probe"})
    seen = await client.until(lambda m: m.get("type") == "tool_result" and m.get("agent_id") == agent)
    await client.idle(agent_id=agent)
    (pid,) = runtime_pids(home)
    return seen[-1]["content"]["value"], pid, daemon


def _normalized(probe: dict[str, Any], home: Path) -> dict[str, Any]:
    """What must be equal between two runtimes of two daemons: paths of each home made alike, and
    per-process numbers reduced to the relations that matter."""
    text = str(home)

    def same(value: Any) -> Any:
        if isinstance(value, str):
            return re.sub(r"sess-[0-9a-f]+", "sess-ID", value.replace(text, "HOME"))
        if isinstance(value, dict):
            return {k: same(v) for k, v in value.items()}
        if isinstance(value, list):
            return [same(v) for v in value]
        return value

    fds = {
        fd: target.split(":")[0] if ":[" in target else same(target) for fd, target in probe["fds"].items()
    }
    argv = same(probe["argv"])
    for flag in ("--session", "--agent-id"):  # fresh ids in each daemon
        argv[argv.index(flag) + 1] = "ID"
    return {
        "env": same(probe["env"]),
        "cwd": probe["cwd"],
        "own_session": probe["sid"] == probe["pid"] == probe["pgid"],
        "fds": fds,
        "signals": probe["signals"],
        "umask": probe["umask"],
        "locks": probe["locks"],
        "argv": argv,
        "path": probe["path"],
        "flags": probe["flags"],
    }


async def test_a_forked_runtime_is_what_a_spawned_one_is(tmp_path, project):
    """Environment, cwd, own session and process group, descriptors, signal masks, umask, the
    session's flock, argv, sys.path and flags: equal between a runtime the template forked and one
    spawned cold — and the first really was forked (its parent is the template), the second spawned."""
    warm_home, cold_home = tmp_path / "warm", tmp_path / "cold"
    started: list[DaemonProcess] = []
    try:
        warm, warm_pid, warm_daemon = await _probe(warm_home, project, started)
        cold, cold_pid, cold_daemon = await _probe(cold_home, project, started, "--cold-start")
        assert _ppid(warm_pid) in templates_of(warm_daemon), "forked by the template"
        assert _ppid(cold_pid) == cold_daemon.proc.pid, "spawned by the daemon itself"
        w, c = _normalized(warm, warm_home), _normalized(cold, cold_home)
        assert w["fds"] == c["fds"]
        assert w == c
        assert warm["locks"] == [["FLOCK", "ADVISORY", "WRITE"]], "it holds its session's lock"
        cmdline = _cmdline(warm_pid)
        assert cmdline[1:6] == ["-P", "-m", "shard", "agent", "--stdio"], "ps shows what a spawn would"
        assert cmdline[cmdline.index("--home") + 1] == str(warm_home)
    finally:
        for daemon in started:
            await daemon.kill()


async def test_a_config_change_rebuilds_the_template(daemon_factory, home, project):
    """A changed config.toml retires the template: the next runtime comes from a new one, and the
    old one exits at once — its memory is not kept for the life of its runtimes, which live on as
    the daemon's own children: they still answer, a clean stop is still seen as one, and a crash
    still comes with its status (agent_exited, exit code -9 for a SIGKILL)."""
    daemon = await daemon_factory([text_step("still here")], loop=True)
    client = await daemon.unix()
    first = await create_agent(client, project)
    second = await create_agent(client, project)
    await attach(client, first)
    await attach(client, second)
    old_pids = runtime_pids(home)
    old_template = _ppid(old_pids[0])
    assert templates_of(daemon) == [old_template]
    config = home / "config.toml"
    config.write_text(config.read_text() + "\n# a change\n")
    await create_agent(client, project)
    (third_pid,) = (pid for pid in runtime_pids(home) if pid not in old_pids)
    new_template = _ppid(third_pid)
    assert new_template != old_template
    await _gone(old_template)
    assert templates_of(daemon) == [new_template], "the old template left while its runtimes run"
    assert [_ppid(pid) for pid in old_pids] == [daemon.proc.pid] * 2, "the daemon adopted them"
    await client.send({"type": "prompt", "id": "p", "agent_id": first, "message": "hello?"})
    done = await client.until(
        lambda m: (
            m.get("type") == "message_complete"
            and m.get("agent_id") == first
            and m["message"]["role"] == "assistant"
        )
    )
    assert done[-1]["message"]["content"][0]["text"] == "still here"
    await client.idle(agent_id=first)
    first_pid, second_pid = (_runtime_of(a) for a in (first, second))
    os.kill(second_pid, signal.SIGKILL)
    exited = await client.until(lambda m: m.get("type") == "agent_exited" and m.get("agent_id") == second)
    assert exited[-1]["exit_code"] == -signal.SIGKILL, "its status came back from the adopted child"
    await client.send({"type": "agent.terminate", "id": "t", "agent_id": first})
    await client.until(
        lambda m: (
            m.get("type") == "agent_status_changed"
            and m.get("agent_id") == first
            and m.get("runtime_state") == "stopped"
        )
    )
    await _gone(first_pid)
    assert runtime_pids(home) == [third_pid]
    assert _zombies_of(daemon.proc.pid) == [], "every adopted runtime was reaped"


def _runtime_of(agent_id: str) -> int:
    """The live runtime whose command line names ``agent_id``."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = _cmdline(int(entry.name))
            except OSError:
                continue
            if "--agent-id" in argv and argv[argv.index("--agent-id") + 1] == agent_id:
                return int(entry.name)
    raise AssertionError(f"no runtime of {agent_id}")


def _zombies_of(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == parent:
                found.append(int(entry.name))
    return found


async def test_a_template_that_dies_is_replaced_and_its_runtimes_go_on(daemon_factory, home, project):
    """kill -9 of the template: the runtime it forked still answers, its later exit is still noticed
    (the daemon reports it stopped), and the next agent is forked by a new template."""
    daemon = await daemon_factory([text_step("still here")], loop=True)
    client = await daemon.unix()
    first = await create_agent(client, project)
    await attach(client, first)
    (first_pid,) = runtime_pids(home)
    template = _ppid(first_pid)
    os.kill(template, signal.SIGKILL)
    await _gone(template)
    await client.send({"type": "prompt", "id": "p", "agent_id": first, "message": "hello?"})
    done = await client.until(
        lambda m: (
            m.get("type") == "message_complete"
            and m.get("agent_id") == first
            and m["message"]["role"] == "assistant"
        )
    )
    assert done[-1]["message"]["content"][0]["text"] == "still here"
    await client.idle(agent_id=first)
    second = await create_agent(client, project)
    second_pid = next(pid for pid in runtime_pids(home) if pid != first_pid)
    assert _ppid(second_pid) in templates_of(daemon), "a new template forked it"
    assert _ppid(second_pid) != template
    await client.send({"type": "agent.terminate", "id": "t", "agent_id": first})
    await client.until(
        lambda m: (
            m.get("type") == "agent_status_changed"
            and m.get("agent_id") == first
            and m.get("runtime_state") == "stopped"
        )
    )
    assert runtime_pids(home) == [second_pid]
    assert second


async def _gone(pid: int) -> None:
    for _ in range(500):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"process {pid} did not exit")


async def test_warm_start_false_in_config_spawns_cold(daemon_factory, home, project):
    """``[daemon] warm_start = false``: no template; every runtime is the daemon's own child. (The
    template a daemon starts before it reads config.toml is let go then: it exits once it reads
    that, which may be after the daemon's first runtime.)"""
    daemon = await daemon_factory([text_step("hi")], extra_toml="\n[daemon]\nwarm_start = false\n")
    client = await daemon.unix()
    await create_agent(client, project)
    (pid,) = runtime_pids(home)
    assert _ppid(pid) == daemon.proc.pid
    for early in templates_of(daemon):
        await _gone(early)
    assert templates_of(daemon) == []


async def test_a_child_that_exits_before_its_fork_is_answered_is_still_seen_to_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runtime that exits at once (here: a bad argument) can be reported by the template while the
    daemon is still wrapping its pipes: its exit, and its status, must not be lost (a full suite on a
    loaded machine hung on it, an attach never answered)."""
    from shard.daemon import warm_pool

    real = warm_pool.pipe_streams

    async def slow_pipe_streams(*fds: int) -> Any:
        await asyncio.sleep(0.5)  # the exit report comes first
        return await real(*fds)

    monkeypatch.setattr(warm_pool, "pipe_streams", slow_pipe_streams)
    template = warm_pool.Template(("test",), lambda _t: None)
    env = {**os.environ, "SHARD_HOME": str(tmp_path / "home")}
    await template.start(env, [])
    try:
        assert await template.ready(60)
        child = await template.fork(["agent", "--stdio", "--no-such-flag"], env, None)
        await asyncio.wait_for(child.wait(), 30)
        assert child.returncode == 2
    finally:
        await template.wait_closed()

"""The test kit's forked runtimes (``shard.testing.forked``): forked by a template of this process's
own, as the daemon forks its runtimes — and spawned cold whenever a fork would differ from a cold
start."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest

from shard.testing import AgentProcess, DaemonProcess, run_shard, start_shard, write_scripted_home
from shard.testing.forked import ACP, DAEMON, TestTemplate
from shard.testing.home import text_step, tool_step
from shard.testing.tools import TEST_TOOLS


@pytest.fixture(autouse=True)
def _no_provider_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine whose own environment holds a provider key starts every daemon and one-shot cold: the
    tests of what is forked must not depend on it."""
    for name in [n for n in os.environ if n.endswith("_API_KEY")]:
        monkeypatch.delenv(name)


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_a_runtime_is_forked_by_the_template_and_serves_and_exits_as_a_spawned_one(
    tmp_path: Path, project: Path
):
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("hello there")])
    agent = await AgentProcess.start(home, project)
    try:
        assert _ppid(agent.proc.pid) not in (os.getpid(), 1)  # the template's child, not ours
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "hi"})
        events = await agent.until(lambda m: m.get("type") == "turn_end")
        assert (
            "".join(m.get("text_delta", "") for m in events if m["type"] == "message_delta") == "hello there"
        )
        assert await agent.finish() == 0
        assert agent.proc.returncode == 0
    finally:
        await agent.kill()


async def test_a_forked_runtimes_signal_is_its_exit_code_and_its_stderr_is_read(
    tmp_path: Path, project: Path
):
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    agent = await AgentProcess.start(home, project)
    await agent.handshake()
    agent.proc.send_signal(signal.SIGKILL)
    assert await agent.proc.wait() == -signal.SIGKILL
    assert agent.proc.returncode == -signal.SIGKILL
    assert await agent.stderr_text() == ""


async def test_an_umask_or_a_python_variable_is_a_cold_start(tmp_path: Path, project: Path):
    """What an interpreter reads at its start, a fork does not get: those starts are spawned."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    for options in ({"umask": 0o077}, {"env": {"PYTHONPATH": str(tmp_path)}}, {"cold": True}):
        agent = await AgentProcess.start(home, project, **options)  # type: ignore[arg-type]
        try:
            await agent.handshake()
            assert _ppid(agent.proc.pid) == os.getpid(), options
        finally:
            await agent.kill()


async def test_a_daemon_is_forked_by_a_template_of_its_own_and_its_stderr_is_in_its_output(
    tmp_path: Path, project: Path
):
    """Daemons come from a second template (the daemon's modules imported first), not the runtimes'
    one; what the daemon writes to stderr is in ``output`` as a spawned daemon's is."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    home.chmod(0o755)  # the daemon says on stderr that it closed this
    daemon = await DaemonProcess.start(home)
    runtime = await AgentProcess.start(home, project)
    try:
        parent = _ppid(daemon.proc.pid)
        assert parent not in (os.getpid(), 1, _ppid(runtime.proc.pid))
        assert any("it is now 0700" in line for line in daemon.startup), daemon.startup
        client = await daemon.unix()
        reply, _ = await client.request({"type": "agent.list", "id": "l"})
        assert reply["success"]
        assert reply["data"] == {"agents": []}
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
        await runtime.kill()


async def test_a_daemon_given_a_key_a_trace_a_prefix_an_umask_or_a_python_variable_is_a_cold_start(
    tmp_path: Path,
):
    """A daemon turns non-dumpable and scrubs its initial environment when it takes a key, and its
    trace counts from its interpreter's start: a fork would fake both."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    starts: list[dict[str, object]] = [
        {"env": {"SOME_API_KEY": "k"}},
        {"env": {"SHARD_TRACE": "0"}},
        {"env": {"PYTHONPATH": str(tmp_path)}},
        {"umask": 0o077},
        {"prefix": ("/usr/bin/env",)},
        {"cold": True},
    ]
    for options in starts:
        daemon = await DaemonProcess.start(home, "--cold-start", **options)  # type: ignore[arg-type]
        try:
            assert _ppid(daemon.proc.pid) == os.getpid(), options
        finally:
            await daemon.kill()


async def test_a_key_in_the_tests_own_environment_makes_a_daemon_a_cold_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    daemon = await DaemonProcess.start(home)
    try:
        assert _ppid(daemon.proc.pid) == os.getpid()
    finally:
        await daemon.kill()


async def _probed_run(home: Path, project: Path, **options: object) -> dict[str, int]:
    """``shard run`` that calls the probe tool: the session and process ids it ran with."""
    code, out, err = await run_shard(home, project, "run", "--json", "--allow", "probe", "go", **options)  # type: ignore[arg-type]
    assert code == 0, err.decode()
    (probe,) = [
        m["content"]["value"] for line in out.splitlines() if (m := json.loads(line))["type"] == "tool_result"
    ]
    return {"pid": probe["pid"], "sid": probe["sid"]}


async def test_shard_run_is_forked_by_the_template_unless_it_would_take_a_key(tmp_path: Path, project: Path):
    """A forked ``shard run`` (the template's child, in a session of its own, as the template makes
    every child) gives what a spawned one gives; one given a key, or asked ``cold``, is spawned: it
    stays in this process's session."""
    home = tmp_path / "home"
    probe = [*TEST_TOOLS, "shard.testing.tools:ProbeTool"]
    write_scripted_home(home, [tool_step("probe", {}), text_step("done")], loop=True, extensions=probe)
    forked = await _probed_run(home, project)
    assert forked["sid"] == forked["pid"] != os.getsid(0)
    for options in ({"env": {"SOME_API_KEY": "k"}}, {"env": {"SHARD_TRACE": "0"}}, {"cold": True}):
        cold = await _probed_run(home, project, **options)
        assert cold["sid"] == os.getsid(0), options


async def test_a_daemon_whose_template_died_can_still_be_stopped_and_the_next_one_gets_a_new_template(
    tmp_path: Path,
):
    """Nothing reports a fork's exit once its template is gone: a test must still not wait forever."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    daemon = await DaemonProcess.start(home, "--cold-start")
    template = TestTemplate.shared(DAEMON)
    template._proc.kill()
    template._proc.wait()
    assert await asyncio.wait_for(daemon.kill(), 10) == -1
    again = await DaemonProcess.start(tmp_path / "again", "--cold-start")
    try:
        assert TestTemplate.shared(DAEMON) is not template
        assert _ppid(again.proc.pid) == TestTemplate.shared(DAEMON)._proc.pid
    finally:
        await again.kill()


async def _acp_initialized(home: Path, project: Path, env: dict[str, str]) -> tuple[int, dict]:
    """``shard acp`` started by ``start_shard`` from the ACP template: (its parent's pid, its answer
    to ``initialize``); it ends at the end of its input."""
    proc = await start_shard("acp", "--home", str(home), env=env, cwd=project, preload=ACP)
    assert proc.stdin is not None
    assert proc.stdout is not None
    parent = _ppid(proc.pid)
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(json.dumps(initialize).encode() + b"\n")
    answer = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    return parent, answer


async def test_shard_acp_is_forked_from_a_template_of_its_own_unless_it_would_take_a_key(
    tmp_path: Path, project: Path
):
    """``start_shard(preload=ACP)``: a ``shard acp`` forked by the template that imported its SDK
    answers ``initialize`` as a spawned one does; given a key it is spawned, our own child."""
    home = tmp_path / "home"
    write_scripted_home(home, [text_step("x")])
    env = {"PATH": os.environ["PATH"], "SHARD_HOME": str(home)}
    parent, forked = await _acp_initialized(home, project, env)
    assert parent == TestTemplate.shared(ACP)._proc.pid
    assert forked["result"]["agentInfo"]["name"] == "shard"
    parent, spawned = await _acp_initialized(home, project, {**env, "SOME_API_KEY": "k"})
    assert parent == os.getpid()
    assert spawned["result"] == forked["result"]

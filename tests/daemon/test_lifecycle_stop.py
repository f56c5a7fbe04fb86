"""Agent lifecycle on a real ``shard daemon``, the ends of it (PROTOCOL §6.4, §8, §10.1, §10.2;
DESIGN §2): terminate, kill, crashes, daemon shutdown, idle reaping, a second daemon on the same
home. Real processes, files and SQLite."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from daemon_helpers import allow, attach, create_agent, mid_turn, runtime_pids, slow_reply
from lifecycle_helpers import (
    AGENT_EXITED_KEYS,
    AGENT_STATUS_CHANGED_KEYS,
    TOUCH,
    break_config,
    drain,
    fails,
    legacy_session,
    listed,
    manifest_rows,
    session_file,
    state_changes,
    until_runtime_state,
    until_stopped,
)

from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home
from shard.testing.agent_process import shard_command
from shard.testing.tools import TEST_TOOLS

# --- terminate, kill, crash -----------------------------------------------------------------------


async def test_terminate_idle_agent_stops_at_once(daemon_factory, home, project):
    """agent.terminate of an idle agent answers deferred:false with the runtime already stopping:
    every connection sees runtime_state stopped, the process is gone, no agent_exited (it is no
    failure); the session JSONL and the agent stay, and attach restores it.

    Covers: R10.1.22, R10.1.23, R3.8, R6.4.11, R10.2.13, R10.2.20
    """
    daemon = await daemon_factory([text_step("remember this"), text_step("x")])
    client = await daemon.unix()
    bystander = await daemon.ws()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "keep me"})
    await client.idle(agent_id=agent)
    kept = session_file(home, sync["session_id"]).read_bytes()

    resp, before = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp == {
        "type": "response",
        "id": "t",
        "command": "agent.terminate",
        "success": True,
        "data": {"deferred": False},
    }
    changes = await until_runtime_state(bystander, agent, "stopped")
    for change in [m for m in changes if m["type"] == "agent_status_changed"]:
        assert set(change) <= AGENT_STATUS_CHANGED_KEYS
        assert change["runtime_state"] in ("starting", "running", "stopping", "stopped", "failed")
    await until_stopped(client, agent, before)
    assert runtime_pids(home) == []
    assert not any(m["type"] == "agent_exited" for m in client.seen + bystander.seen)
    assert session_file(home, sync["session_id"]).read_bytes() == kept
    info = (await listed(client))[agent]
    assert info["runtime_state"] == "stopped"
    _, again = await attach(bystander, agent)
    assert again["session_id"] == sync["session_id"]
    assert again["runtime_epoch"] == sync["runtime_epoch"] + 1
    assert [m["content"][0]["text"] for m in again["live_window"]["messages"]] == ["keep me", "remember this"]


async def test_terminate_during_a_turn_is_deferred(daemon_factory, home, project):
    """agent.terminate during a turn answers deferred:true; the runtime lives on until the turn
    ends (turn_end, status idle), and only then stops; the finished turn is in the session.

    Covers: R10.1.22, R10.1.24, R3.9, R6.4.11
    """
    daemon = await daemon_factory([slow_reply("working ", "and finished after terminate")])
    client, agent, sync = await mid_turn(daemon, project, "work")
    (pid,) = runtime_pids(home)
    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp["success"] is True
    assert resp["data"] == {"deferred": True}
    assert runtime_pids(home) == [pid], "the runtime keeps working"
    rest = await until_runtime_state(client, agent, "stopped")
    kinds = [
        (m["type"], m.get("runtime_state" if m["type"] == "agent_status_changed" else "status")) for m in rest
    ]
    end = kinds.index(("turn_end", None))
    idle = kinds.index(("status", "idle"))
    stopping = kinds.index(("agent_status_changed", "stopping"))
    assert end < stopping, kinds
    assert idle < stopping, kinds
    complete = next(
        m for m in rest if m["type"] == "message_complete" and m["message"]["role"] == "assistant"
    )
    assert complete["message"]["content"][0]["text"] == "working and finished after terminate"
    assert runtime_pids(home) == []
    assert b"and finished after terminate" in session_file(home, sync["session_id"]).read_bytes()


async def test_terminate_forgets_an_agent_whose_first_start_failed(daemon_factory, home, project):
    """agent.terminate of an agent whose runtime never became ready (config.toml broken after the
    daemon read it) answers {deferred: false, forgotten: true}: the agent leaves agent.list and
    state.db, every connection sees agent_status_changed {runtime_state: stopped, detail:
    "forgotten"}, and later commands for it are NOT_FOUND. agent.kill alone does not forget it.

    Covers: R10.1.22, R10.1.23, R10.2.13, R10.2.20
    """
    daemon = await daemon_factory([text_step("never said")])
    client = await daemon.unix()
    bystander = await daemon.ws()
    break_config(home)
    resp, seen = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    assert resp["error"]["code"] == "RUNTIME_START_FAILED", resp
    agent = next(m for m in seen if m["type"] == "agent_spawned")["agent_id"]
    killed, _ = await client.request({"type": "agent.kill", "id": "k", "agent_id": agent})
    assert killed["success"] is True
    assert (await listed(client))[agent]["runtime_state"] == "failed", "kill does not forget"

    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp == {
        "type": "response",
        "id": "t",
        "command": "agent.terminate",
        "success": True,
        "data": {"deferred": False, "forgotten": True},
    }
    gone = (
        await bystander.until(
            lambda m: m["type"] == "agent_status_changed" and m.get("detail") == "forgotten"
        )
    )[-1]
    assert gone["agent_id"] == agent
    assert gone["runtime_state"] == "stopped"
    assert set(gone) <= AGENT_STATUS_CHANGED_KEYS
    assert agent not in await listed(client)
    assert manifest_rows(home, agent_id=agent) == []
    await fails(client, {"type": "agent.status", "id": "s", "agent_id": agent}, "NOT_FOUND")
    await fails(client, {"type": "agent.attach", "id": "a", "agent_id": agent}, "NOT_FOUND")
    await fails(client, {"type": "agent.terminate", "id": "t2", "agent_id": agent}, "NOT_FOUND")


async def test_terminate_forgets_a_failed_adoption_and_keeps_the_session(daemon_factory, home, project):
    """An adopted session whose runtime cannot start (config.toml broken): agent.terminate forgets
    the agent but not the session — its bytes are untouched and, once the cause is fixed, it can be
    adopted again by a new agent.

    Covers: R10.1.22, R10.1.12, R6.4.11
    """
    write_scripted_home(home, [text_step("legacy answer"), text_step("x")], extensions=TEST_TOOLS)
    session_id = await legacy_session(home, project, "keep this conversation")
    original = session_file(home, session_id).read_bytes()
    config = home / "config.toml"
    good = config.read_text()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    config.write_text("default_model = [this is not toml\n")
    adopt = {"type": "agent.create", "id": "adopt", "cwd": str(project), "session_id": session_id}
    resp, _ = await client.request(adopt)
    agent = resp["error"]["data"]["agent_id"]

    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp["data"] == {"deferred": False, "forgotten": True}
    assert manifest_rows(home, session_id=session_id) == []
    assert session_file(home, session_id).read_bytes() == original

    config.write_text(good)
    resp, _ = await client.request(adopt)
    assert resp["success"] is True, resp
    assert resp["data"]["agent_id"] != agent
    _, sync = await attach(client, resp["data"]["agent_id"])
    assert sync["live_window"]["messages"][0]["content"][0]["text"] == "keep this conversation"


async def test_terminate_forgets_a_crashed_agent_not_a_stopped_one(daemon_factory, home, project, tmp_path):
    """A runtime that crashed (runtime_state failed, nothing running) is forgotten by
    agent.terminate, its session kept; an agent whose runtime once started and is merely stopped —
    even after a daemon restart, when no runtime of it has started in this daemon — is not: its
    terminate is the plain {deferred: false} and it stays listed.

    Covers: R10.1.22, R10.1.23, R6.4.11
    """
    other = tmp_path / "other"
    other.mkdir()
    daemon = await daemon_factory([text_step("x")], loop=True)
    client = await daemon.unix()
    crashed = await create_agent(client, project)
    _, sync = await attach(client, crashed)
    await client.send({"type": "prompt", "agent_id": crashed, "message": "remember me"})
    await client.idle(agent_id=crashed)
    kept = session_file(home, sync["session_id"]).read_bytes()
    stopped = await create_agent(client, other)
    pids = runtime_pids(home)
    assert len(pids) == 2
    crashed_pid = next(p for p in pids if str(project).encode() in Path(f"/proc/{p}/cmdline").read_bytes())
    os.kill(crashed_pid, signal.SIGKILL)
    await until_runtime_state(client, crashed, "failed")

    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": crashed})
    assert resp["data"] == {"deferred": False, "forgotten": True}
    assert crashed not in await listed(client)
    assert session_file(home, sync["session_id"]).read_bytes() == kept

    await daemon.stop()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    assert (await listed(client))[stopped]["runtime_state"] == "stopped"
    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": stopped})
    assert resp["data"] == {"deferred": False}
    assert stopped in await listed(client)


async def test_a_failed_first_start_is_forgotten_after_a_daemon_restart(daemon_factory, home, project):
    """Whether an agent ever started is durable: after a daemon restart an agent whose only start
    failed is listed as stopped, and agent.terminate still forgets it.

    Covers: R10.1.22, R10.1.23
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    good = break_config(home)
    resp, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(project)})
    agent = resp["error"]["data"]["agent_id"]
    (home / "config.toml").write_bytes(good)  # or the next daemon would refuse to start
    await daemon.stop()
    daemon = await daemon_factory(None)
    client = await daemon.unix()
    assert (await listed(client))[agent]["runtime_state"] == "stopped"
    resp, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert resp["data"] == {"deferred": False, "forgotten": True}
    assert agent not in await listed(client)


async def test_kill_stops_the_runtime_and_keeps_the_agent(daemon_factory, home, project, tmp_path):
    """agent.kill (plain, mid-turn; force, idle) answers a bare success with the runtime gone; the
    agent stays listed (runtime stopped, not failed) with its session, and attach restores it under a
    new runtime_epoch.

    Covers: R10.1.25, R6.4.12, R6.4.10, R6.4.16
    """
    daemon = await daemon_factory([tool_step("sleep", {"seconds": 60}), text_step("after")])
    client = await daemon.unix()
    other = tmp_path / "other"
    other.mkdir()
    busy = await create_agent(client, project, name="busy")
    idle = await create_agent(client, other, name="idle")
    _, busy_sync = await attach(client, busy)
    _, idle_sync = await attach(client, idle)
    await client.send({"type": "prompt", "agent_id": busy, "message": "long wait"})
    await client.until(lambda m: m["type"] == "tool_call" and m.get("agent_id") == busy)
    assert len(runtime_pids(home)) == 2
    sessions = {busy: busy_sync["session_id"], idle: idle_sync["session_id"]}

    for agent, force in ((busy, False), (idle, True)):
        resp, before = await client.request(
            {"type": "agent.kill", "id": f"k-{agent}", "agent_id": agent, "force": force}
        )
        assert resp == {"type": "response", "id": f"k-{agent}", "command": "agent.kill", "success": True}
        await until_stopped(client, agent, before)
    assert runtime_pids(home) == []
    assert session_file(home, sessions[busy]).exists(), "the busy agent's session is kept"
    agents = await listed(client)
    for agent in (busy, idle):
        assert agents[agent]["runtime_state"] == "stopped"
        assert agents[agent]["status"] in ("idle", "error"), "not left in an active status"

    watcher = await daemon.ws()
    _, restored = await attach(watcher, busy)
    assert restored["session_id"] == sessions[busy]
    assert restored["runtime_epoch"] == busy_sync["runtime_epoch"] + 1
    assert restored["live_window"]["messages"][0]["content"][0]["text"] == "long wait"
    _, restored_idle = await attach(watcher, idle)
    assert restored_idle["session_id"] == sessions[idle]


async def test_idle_runtime_crash_is_reported_to_every_connection(daemon_factory, home, project):
    """A runtime that dies while idle is reported to connections that never attached:
    agent_exited {agent_id, runtime_state failed, reason, exit_code} and agent_status_changed with
    runtime_state failed, agent_id as payload; the agent is restorable.

    Covers: R10.2.12, R10.2.13, R10.2.20, R6.4.10, R6.4.16
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    bystander = await daemon.ws()
    agent = await create_agent(client, project)
    (pid,) = runtime_pids(home)
    os.kill(pid, signal.SIGKILL)
    exited = (await bystander.until_type("agent_exited"))[-1]
    assert set(exited) <= AGENT_EXITED_KEYS
    assert exited["agent_id"] == agent
    assert exited["runtime_state"] == "failed"
    assert isinstance(exited["reason"], str)
    assert exited["reason"]
    assert exited["exit_code"] == -9
    changed = (await until_runtime_state(bystander, agent, "failed"))[-1]
    assert set(changed) <= AGENT_STATUS_CHANGED_KEYS
    _, sync = await attach(client, agent)
    assert sync["runtime_epoch"] == 1
    assert (await listed(client))[agent]["runtime_state"] == "running"


# --- daemon shutdown ------------------------------------------------------------------------------


async def test_graceful_shutdown_lets_the_turn_finish(daemon_factory, home, project):
    """daemon.shutdown (graceful by default) answers success, lets the running turn finish — its
    answer reaches the client and the session — then stops the runtime and exits 0.

    Covers: R10.1.28, R10.1.29
    """
    daemon = await daemon_factory([slow_reply("started ", "and finished during shutdown")])
    client, _, sync = await mid_turn(daemon, project, "go")
    resp, _ = await client.request({"type": "daemon.shutdown", "id": "bye"})
    assert resp == {"type": "response", "id": "bye", "command": "daemon.shutdown", "success": True}
    code = await asyncio.wait_for(daemon.proc.wait(), 30)
    assert code == 0
    assert runtime_pids(home) == []
    text = session_file(home, sync["session_id"]).read_bytes()
    assert b"started and finished during shutdown" in text
    rest = await drain(client)
    ends = [m for m in rest if m["type"] == "turn_end"]
    assert len(ends) == 1, "the turn ended before the daemon closed the connection"


async def test_forced_shutdown_kills_runtimes_at_once(daemon_factory, home, project):
    """daemon.shutdown force:true does not wait for a running turn (a 60 s tool call): the runtimes
    are killed, the daemon exits, the turn never finishes.

    Covers: R10.1.28, R10.1.30
    """
    daemon = await daemon_factory([tool_step("sleep", {"seconds": 60}), text_step("never said")])
    client = await daemon.unix()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "wait a minute"})
    await client.until_type("tool_call")
    assert len(runtime_pids(home)) == 1
    resp, _ = await client.request({"type": "daemon.shutdown", "id": "now", "force": True})
    assert resp == {"type": "response", "id": "now", "command": "daemon.shutdown", "success": True}
    code = await asyncio.wait_for(daemon.proc.wait(), 15)
    assert code == 0
    assert runtime_pids(home) == []
    assert b"never said" not in session_file(home, sync["session_id"]).read_bytes()
    assert not any(m["type"] == "turn_end" for m in client.seen + await drain(client))


# --- idle reaping ---------------------------------------------------------------------------------


async def test_idle_runtime_is_reaped_and_restored(daemon_factory, home, project):
    """With --idle-runtime-timeout 1 an idle runtime is stopped no sooner than that period after
    it went idle (runtime_state stopped to everyone, the process gone); the next prompt restores it
    with runtime_epoch + 1 and a fresh sync holding the history.

    Covers: R6.4.13, R6.4.15, R10.2.13, R10.2.20
    """
    daemon = await daemon_factory([text_step("first"), text_step("second")], "--idle-runtime-timeout", "1")
    client = await daemon.unix()
    bystander = await daemon.ws()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "one"})
    await client.idle(agent_id=agent)
    loop = asyncio.get_running_loop()
    went_idle = loop.time()
    await until_runtime_state(client, agent, "stopped", within=15)
    assert loop.time() - went_idle >= 0.9, "reaped before the idle period passed"
    change = (await until_runtime_state(bystander, agent, "stopped"))[-1]
    assert set(change) <= AGENT_STATUS_CHANGED_KEYS
    assert change["status"] == "idle"
    assert runtime_pids(home) == []
    assert not any(m["type"] == "agent_exited" for m in client.seen)

    reaped_epoch = max(m["runtime_epoch"] for m in client.seen if m["type"] == "sync")
    await client.send({"type": "prompt", "agent_id": agent, "message": "two"})
    fresh = (await client.until(lambda m: m["type"] == "sync" and m.get("agent_id") == agent))[-1]
    assert fresh["runtime_epoch"] == reaped_epoch + 1
    assert fresh["session_id"] == sync["session_id"]
    assert [m["content"][0]["text"] for m in fresh["live_window"]["messages"]][:2] == ["one", "first"]
    done = await client.idle(agent_id=agent)
    assert any(
        m["type"] == "message_complete" and m["message"]["content"][0].get("text") == "second" for m in done
    )


async def test_active_agent_is_never_reaped(daemon_factory, home, project):
    """With --idle-runtime-timeout 0.5 an agent running a 1.2 s tool (streaming) and then waiting
    1.5 s for a permission answer nobody gives keeps its runtime; once answered and idle it is
    reaped. End to end; test_broker_core.py pins the rule with a fake clock.

    Covers: R6.4.14, R6.4.13
    """
    steps = [tool_step("sleep", {"seconds": 1.2}), TOUCH, text_step("made it")]
    daemon = await daemon_factory(steps, "--idle-runtime-timeout", "0.5")
    client = await daemon.unix()
    agent = await create_agent(client, project)
    await attach(client, agent)
    await client.send({"type": "prompt", "agent_id": agent, "message": "sleep then write"})
    await client.until(lambda m: m["type"] == "tool_call" and m.get("agent_id") == agent)
    active_from = len(client.seen)  # before the turn (on a loaded machine) an idle reap is allowed
    (pid,) = runtime_pids(home)
    request = (await client.until_type("permission_request"))[-1]
    assert runtime_pids(home) == [pid], "reaped while streaming"
    await asyncio.sleep(1.5)  # three idle periods pass while the request waits
    assert runtime_pids(home) == [pid], "reaped while waiting for permission"
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": agent})
    info = status["data"]["agents"][0]
    assert (info["status"], info["runtime_state"]) == ("waiting_for_permission", "running")
    assert not {"stopping", "stopped"} & set(state_changes(client.seen[active_from:], agent))

    await allow(client, agent, request["request_id"])
    await client.idle(agent_id=agent)
    assert (project / "made.txt").exists()
    await until_runtime_state(client, agent, "stopped", within=15)
    assert runtime_pids(home) == []


async def test_a_session_open_elsewhere_is_not_adopted_until_it_is_free(daemon_factory, home, project):
    """Adopting a session a direct `shard agent` still has open fails with RUNTIME_START_FAILED
    (its message says why) and writes nothing to the session; the binding is kept, and once the
    other process has exited an attach starts it.

    Covers: R10.1.16, R6.4.9, R8.14
    """
    daemon = await daemon_factory([text_step("direct"), text_step("adopted")])
    direct = await AgentProcess.start(home, project)
    _, sync = await direct.handshake()
    session_id = sync["session_id"]
    await direct.send({"type": "prompt", "message": "first"})
    await direct.idle()
    session_file = home / "sessions" / session_id / "session.jsonl"
    before = session_file.read_bytes()
    client = await daemon.unix()
    resp, _ = await client.request(
        {"type": "agent.create", "id": "c", "cwd": str(project), "session_id": session_id}
    )
    assert resp["error"]["code"] == "RUNTIME_START_FAILED"
    assert "open in another shard process" in resp["error"]["message"]
    agent = resp["error"]["data"]["agent_id"]
    assert session_file.read_bytes() == before
    assert await direct.finish() == 0
    _, sync2 = await attach(client, agent)
    assert sync2["session_id"] == session_id
    await client.send({"type": "prompt", "agent_id": agent, "message": "second"})
    await client.idle(agent_id=agent)


async def _run_daemon_expecting_failure(home: Path, *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *shard_command("daemon", "--home", str(home), *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "SHARD_HOME": str(home)},
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode if proc.returncode is not None else -1, err.decode()


async def test_a_second_daemon_refuses_to_start_and_harms_nothing(daemon_factory, home, tmp_path, project):
    """A second daemon on the same SHARD_HOME, or on a port already in use, exits 1 with one clear
    line (no traceback) and leaves the first daemon's socket, daemon.json and agents alone.

    Covers: R4.2.2, R10.1.2
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    agent = await create_agent(client, project)
    info = (home / "daemon.json").read_text()

    code, err = await _run_daemon_expecting_failure(home, "--port", "0")
    assert code == 1
    assert "already serving this SHARD_HOME" in err
    assert "Traceback" not in err

    other = tmp_path / "other-home"
    code, err = await _run_daemon_expecting_failure(other, "--port", str(daemon.port))
    assert code == 1
    assert f"cannot listen on 127.0.0.1:{daemon.port}" in err
    assert "Traceback" not in err
    assert not (other / "daemon.sock").exists(), "the failed daemon left its socket behind"

    assert (home / "daemon.json").read_text() == info
    assert (home / "daemon.sock").exists()
    listing, _ = await client.request({"type": "agent.list", "id": "l"})
    assert [a["agent_id"] for a in listing["data"]["agents"]] == [agent]
    again = await daemon.unix()
    assert again.seen[0]["type"] == "hello"


async def test_create_needs_an_existing_absolute_cwd(daemon_factory, project, tmp_path):
    """A relative cwd (it would mean the daemon's directory, not the client's) and a cwd that is not
    a directory are INVALID_REQUEST and create nothing; `~` is the user's home.

    Covers: R10.1.3, R8.5
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    (tmp_path / "plain.txt").write_text("x")
    for cwd in (".", "project", str(tmp_path / "missing"), str(tmp_path / "plain.txt")):
        refused, _ = await client.request({"type": "agent.create", "id": "c", "cwd": cwd})
        assert refused["success"] is False, cwd
        assert refused["error"]["code"] == "INVALID_REQUEST"
    listing, _ = await client.request({"type": "agent.list", "id": "l"})
    assert listing["data"]["agents"] == []
    made, _ = await client.request({"type": "agent.create", "id": "h", "cwd": "~"})
    assert made["success"] is True
    status, _ = await client.request(
        {"type": "agent.status", "id": "s", "agent_id": made["data"]["agent_id"]}
    )
    assert status["data"]["agents"][0]["cwd"] == os.path.realpath(os.path.expanduser("~"))

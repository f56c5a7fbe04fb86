"""``shard run`` through a running daemon (issue 16): the same output and exit status as a run in
the process (``--direct``), a fresh agent that is gone afterwards (``--keep`` keeps it), runs with
their own allowances kept direct, and Ctrl-C ending the daemon's turn with 130.

Every test runs the real command in a subprocess beside a real ``shard daemon``.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.testing import (
    DaemonProcess,
    recorded_requests,
    run_shard,
    shard_command,
    text_step,
    tool_step,
    write_scripted_home,
)

pytestmark = pytest.mark.slow
_IDS = re.compile(rb"\b(turn|msg|tc|sess|req)-[0-9a-f]+")
_TIMES = re.compile(rb'"(duration_ms|ts|created_at)":[0-9.]+')


async def _run(home: Path, cwd: Path, *args: str) -> tuple[int, bytes, str]:
    code, out, err = await run_shard(home, cwd, "run", *args)
    return code, out, err.decode()


def _modulo_ids_and_times(stream: bytes) -> list[bytes]:
    return [_TIMES.sub(rb'"\1":T', _IDS.sub(rb"\1-ID", line)) for line in stream.splitlines()]


async def _agents(daemon: DaemonProcess) -> list[dict[str, Any]]:
    client = await daemon.unix()
    listed, _ = await client.request({"type": "agent.list", "id": "list"})
    await client.close()
    return listed["data"]["agents"]


@pytest.mark.parametrize(
    ("steps", "status"),
    [
        ([tool_step("ls", {}), text_step("two files")], 0),
        ([{"blocks": [{"type": "text", "text": "half"}], "error": "the provider broke"}], 1),
    ],
    ids=["done", "failed"],
)
async def test_through_the_daemon_and_direct_print_the_same_stream(tmp_path, project, steps, status):
    """``--json`` streams equal line for line modulo ids and times, and the exit status equal —
    for a turn with a tool call and for one whose provider fails. The run really went through the
    daemon: it created (and then removed) an agent the daemon announced.
    """
    home = write_scripted_home(tmp_path / "home", steps, loop=True)
    daemon = await DaemonProcess.start(home)
    try:
        watcher = await daemon.unix()
        via_daemon = await _run(home, project, "--json", "what is here?")
        spawned = await watcher.until(lambda m: m.get("type") == "agent_spawned")
        direct = await _run(home, project, "--json", "--direct", "what is here?")
        assert via_daemon[0] == direct[0] == status, (via_daemon[2], direct[2])
        assert _modulo_ids_and_times(via_daemon[1]) == _modulo_ids_and_times(direct[1])
        assert len(via_daemon[1].splitlines()) > 5
        assert spawned[-1]["info"]["name"] == "shard run"
        assert await _agents(daemon) == [], "the run's agent is removed afterwards"
        assert len(list((home / "sessions").glob("sess-*"))) == 2, "both sessions are kept"
    finally:
        await daemon.kill()


async def test_keep_leaves_the_agent_and_its_runtime_has_no_subagent_tools(tmp_path, project):
    """``--keep``: the agent stays in the daemon, on the run's session; like a direct run, its model
    was offered no subagent tools (a daemon-hosted agent otherwise has them)."""
    home = write_scripted_home(tmp_path / "home", [text_step("kept")], loop=True)
    daemon = await DaemonProcess.start(home)
    try:
        code, out, err = await _run(home, project, "--keep", "hello")
        assert (code, out) == (0, b"kept\n"), err
        (agent,) = await _agents(daemon)
        session = re.search(r"session (sess-[0-9a-f]+)", err)
        assert session is not None
        assert agent["name"] == "shard run"
        client = await daemon.unix()
        attached, _ = await client.request({"type": "agent.attach", "id": "a", "agent_id": agent["agent_id"]})
        assert attached["success"], attached
        sync = await client.until(lambda m: m.get("type") == "sync")
        assert sync[-1]["session_id"] == session.group(1)
        offered = set(recorded_requests(home)[-1]["tools"])
        assert "read" in offered
        assert not any(name.startswith("subagent") for name in offered), offered
    finally:
        await daemon.kill()


async def test_a_run_with_its_own_allowances_stays_direct(tmp_path, project):
    """``--allow`` grants belong to this process: the run does not go through the daemon (with
    ``--keep`` a daemon run would have left its agent listed; this one leaves none)."""
    home = write_scripted_home(tmp_path / "home", [text_step("ok")], loop=True)
    daemon = await DaemonProcess.start(home)
    try:
        code, out, err = await _run(home, project, "--keep", "--allow", "write", "hello")
        assert (code, out) == (0, b"ok\n"), err
        assert await _agents(daemon) == []
        code, _, err = await _run(home, project, "--keep", "hello")
        assert code == 0, err
        assert len(await _agents(daemon)) == 1, "the same run without --allow went through the daemon"
    finally:
        await daemon.kill()


async def test_a_retry_and_its_end_show_on_stderr_through_the_daemon(tmp_path, project):
    """Nothing listens on the provider's loopback port: the run through the daemon says each retry
    as it happens (the delay and the cause) on stderr — one, since a local refusal is retried once —
    then the error naming the URL, and exits 1, as a direct run does."""
    with socket.socket() as s:  # a port with nothing behind it
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'default_model = "local/m"\n[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = [{ id = "m" }]\n'
    )
    daemon = await DaemonProcess.start(home)
    try:
        watcher = await daemon.unix()
        code, _out, err = await _run(home, project, "hi")
        await watcher.until(lambda m: m.get("type") == "agent_spawned")  # it went through the daemon
    finally:
        await daemon.kill()
    lines = err.splitlines()
    assert code == 1, err
    assert [line for line in lines if "retrying" in line] == [
        "shard: retrying in 0.5 s: connection refused (attempt 2 of 2)"
    ]
    assert (
        f"shard: PROVIDER_ERROR: local: nothing is listening at {url}: is the server running? "
        "(gave up after 2 attempts)"
    ) in lines


@pytest.mark.no_local_runtimes
async def test_a_refused_run_says_what_a_direct_one_says(tmp_path, project):
    """An unknown model: one line, the same as a direct run's, exit 2, and no agent left behind."""
    home = write_scripted_home(tmp_path / "home", [text_step("x")])
    daemon = await DaemonProcess.start(home)
    try:
        via_daemon = await _run(home, project, "--model", "nope/x", "hi")
        direct = await _run(home, project, "--direct", "--model", "nope/x", "hi")
        assert via_daemon[0] == direct[0] == 2
        assert via_daemon[2].strip().splitlines()[-1] == direct[2].strip().splitlines()[-1]
        assert "unknown model 'nope/x'" in via_daemon[2]
        assert await _agents(daemon) == []
    finally:
        await daemon.kill()


async def test_ctrl_c_ends_the_daemons_turn_and_exits_130(tmp_path, project):
    """SIGINT while the daemon's agent streams: the turn is aborted, the run exits 130 without a
    traceback, and its agent is removed."""
    home = write_scripted_home(
        tmp_path / "home", [{"blocks": [{"type": "text", "text": "a"}], "stall": True}]
    )
    daemon = await DaemonProcess.start(home)
    try:
        watcher = await daemon.unix()
        proc = await asyncio.create_subprocess_exec(
            *shard_command("run", "--json", "go"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=project,
            env={**os.environ, "SHARD_HOME": str(home)},
        )
        assert proc.stdout is not None
        while b'"text_delta":"a"' not in await asyncio.wait_for(proc.stdout.readline(), 30):
            pass
        spawned = await watcher.until(lambda m: m.get("type") == "agent_spawned")
        proc.send_signal(signal.SIGINT)
        rest, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 130, err
        assert b"Traceback" not in err
        assert any(orjson.loads(line).get("type") == "turn_end" for line in rest.splitlines()), rest
        assert spawned[-1]["info"]["name"] == "shard run"
        assert await _agents(daemon) == []
    finally:
        await daemon.kill()


async def test_a_daemon_that_dies_mid_run_is_one_line_and_exit_1(tmp_path, project):
    """kill -9 of the daemon while its agent streams: the run says so in one line and exits 1, with
    no traceback."""
    home = write_scripted_home(
        tmp_path / "home", [{"blocks": [{"type": "text", "text": "a"}], "stall": True}]
    )
    daemon = await DaemonProcess.start(home)
    try:
        proc = await asyncio.create_subprocess_exec(
            *shard_command("run", "--json", "go"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=project,
            env={**os.environ, "SHARD_HOME": str(home)},
        )
        assert proc.stdout is not None
        while b'"text_delta":"a"' not in await asyncio.wait_for(proc.stdout.readline(), 30):
            pass
        daemon.proc.kill()
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 1, err
        assert err.decode().strip().splitlines()[-1] == "shard: the daemon went away during the run"
        assert b"Traceback" not in err
    finally:
        await daemon.kill()


async def test_a_follow_up_another_client_queues_for_the_run_is_said_and_delivered(tmp_path, project):
    """A person queues a follow-up (in the web client, say) for the agent a ``shard run`` drives
    through the daemon: the run says so on stderr, the follow-up is delivered as the next turn
    before the run ends (its answer printed too), and the session holds it.

    Covers: R9.2.5
    """
    slow = {"blocks": [{"type": "text", "text": "working. "}, {"type": "pause", "ms": 1500}]}
    home = write_scripted_home(tmp_path / "home", [slow, text_step("tests pass")])
    daemon = await DaemonProcess.start(home)
    try:
        person = await daemon.unix()
        run = asyncio.create_task(_run(home, project, "start"))
        agent = (await person.until(lambda m: m.get("type") == "agent_spawned"))[-1]["agent_id"]
        await person.request({"type": "agent.attach", "id": "a", "agent_id": agent})
        await person.until(lambda m: m.get("type") == "message_delta")
        queued, _ = await person.request(
            {
                "type": "prompt",
                "id": "f",
                "agent_id": agent,
                "message": "then the tests",
                "streaming_behavior": "follow_up",
            }
        )
        assert queued["success"], queued
        code, out, err = await asyncio.wait_for(run, 60)
        assert code == 0, err
        assert re.search(r"shard: unix-client-\d+ queued a follow-up: then the tests", err), err
        assert out.decode().endswith("tests pass\n"), out
        assert recorded_requests(home)[-1]["messages"][-1]["content"][0]["text"] == "then the tests"
    finally:
        await daemon.kill()

"""A remote agent's sessions and children (issue: remote hosts, items 2 and 6): a fork written on
the host and activated there, a child a local parent runs on the host, and the provider key that
reaches the host's runtime without appearing anywhere another process or the host's disk shows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.providers._server import ProviderServer, Stream
from conftest import absolute_script, host_toml
from shard.daemon.hosts.ssh import control_dir
from shard.testing import DaemonProcess, UnixClient, text_step, tool_step, write_scripted_home

# a real sshd, daemons and runtimes on the "host" (so no local runtime: its daemons need no template)
pytestmark = [pytest.mark.slow, pytest.mark.no_local_runtimes]

KEY = "sk-remote-9f8e7d6c5b4a39281706"


async def _daemon(tmp_path: Path, sshd, remote: Path, steps: list, **kw) -> DaemonProcess:
    home = write_scripted_home(tmp_path / "home", steps, extra_toml=host_toml(sshd, remote), **kw)
    absolute_script(home)
    return await DaemonProcess.start(home)


async def _create(client, cwd: Path, **fields) -> str:
    resp, _ = await client.request({"type": "agent.create", "id": "c", "cwd": str(cwd), **fields})
    assert resp["success"] is True, resp
    return resp["data"]["agent_id"]


async def _turn(client, agent_id: str, message: str) -> list[dict]:
    await client.send({"type": "prompt", "agent_id": agent_id, "message": message})
    return await client.until(
        lambda m: m.get("type") == "status" and m.get("agent_id") == agent_id and m.get("status") == "idle"
    )


async def test_a_fork_on_the_host_is_activated_there(tmp_path, sshd, remote):
    """session_op fork on a remote agent writes the fork on the host; session.activate gives it an
    agent on the same host, which restores the conversation up to the fork point."""
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("one"), text_step("two"), text_step("three")])
    try:
        client = await daemon.unix()
        agent_id = await _create(client, remote / "project", host="box")
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        first = await _turn(client, agent_id, "first question")
        await _turn(client, agent_id, "second question")
        point = [m for m in first if m["type"] == "message_complete"][-1]["message_id"]
        resp, _ = await client.request(
            {
                "type": "session_op",
                "id": "f",
                "agent_id": agent_id,
                "op": "fork",
                "args": {"from_entry_id": point},
            }
        )
        assert resp["success"] is True, resp
        fork = resp["data"]["session_id"]
        assert list((remote / "home" / "sessions").rglob(f"{fork}/session.jsonl")), "the fork is on the host"
        resp, _ = await client.request(
            {"type": "session.activate", "id": "s", "agent_id": agent_id, "session_id": fork}
        )
        assert resp["success"] is True, resp
        forked = resp["data"]["agent_id"]
        resp, _ = await client.request({"type": "agent.attach", "id": "a2", "agent_id": forked})
        assert resp["data"]["info"]["host"] == "box"
        assert resp["data"]["info"]["session_id"] == fork
        events = await _turn(client, forked, "after the fork")
        # the scripted model answers by the count of replies it was shown: one, at the fork point
        assert any(m["type"] == "message_complete" and "two" in str(m["message"]) for m in events)
        from shard.testing import recorded_requests

        sent = str(recorded_requests(daemon.home)[-1]["messages"])
        assert "first question" in sent
        assert "second question" not in sent  # the fork point was before it
    finally:
        await daemon.stop()


async def test_a_local_parent_runs_a_child_on_the_host(tmp_path, sshd, remote):
    """subagent.create naming the host: the child runs there (its AgentInfo says so, its session is
    on the host) and its run completes with its answer; the parent stays on this machine."""
    project = remote / "project"  # the same path on both "machines": one filesystem here
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("child finished")], loop=True)
    try:
        client = await daemon.unix()
        parent = await _create(client, project)
        resp, _ = await client.request(
            {
                "type": "subagent.create",
                "id": "c",
                "parent_agent_id": parent,
                "name": "builder",
                "task": "build it",
                "host": "box",
            }
        )
        assert resp["success"] is True, resp
        job = resp["data"]["job_id"]
        wait = {"type": "subagent.wait", "id": "w", "parent_agent_id": parent, "handles": [job]}
        result, _ = await client.request(wait)
        assert result["data"]["aggregate_state"] == "completed", result
        assert result["data"]["runs"][0]["final_text"] == "child finished"
        listed, _ = await client.request({"type": "agent.list", "id": "l"})
        hosts = {a["agent_id"]: a.get("host") for a in listed["data"]["agents"]}
        assert hosts.pop(parent) is None
        assert list(hosts.values()) == ["box"]
        assert list((remote / "home" / "sessions").iterdir()), "the child's session is on the host"
        resp, _ = await client.request(
            {
                "type": "subagent.create",
                "id": "c2",
                "parent_agent_id": parent,
                "name": "x",
                "task": "t",
                "host": "nope",
            }
        )
        assert resp["error"]["code"] == "INVALID_REQUEST"
        assert "unknown host" in resp["error"]["message"]
    finally:
        await daemon.stop()


@pytest.fixture
async def server():
    srv = await ProviderServer.start()
    try:
        yield srv
    finally:
        await srv.close()


def _everywhere_readable(secret: bytes) -> list[str]:
    """Every process's command line and environment this user can read that holds ``secret``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        for part in ("cmdline", "environ"):
            try:
                data = (entry / part).read_bytes()
            except OSError:
                continue
            if secret in data:
                found.append(f"{entry.name}/{part}")
    return found


async def test_the_key_reaches_the_host_runtime_without_appearing(
    tmp_path, sshd, remote, server, monkeypatch
):
    """The daemon's provider (an OpenAI-style server here, its key in the daemon's environment)
    answers the remote agent: the request carries the key, yet no process's command line or
    environment holds it, and no file on the host (its SHARD_HOME, the project) does."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server.replies.append(Stream("openai/text.sse"))
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(
        'default_model = "far/gpt-test"\n\n[[providers]]\nname = "far"\nkind = "openai"\n'
        f'base_url = "{server.openai_url}"\napi_key_env = "FAR_KEY"\nmodels = ["gpt-test"]\n'
        + host_toml(sshd, remote)
    )
    daemon = await DaemonProcess.start(home, env={"FAR_KEY": KEY})
    try:
        client = await daemon.unix()
        agent_id = await _create(client, remote / "project", host="box")
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        await _turn(client, agent_id, "hello")
        assert server.requests, "the host's runtime called the daemon's provider"
        assert server.requests[-1].headers["Authorization"] == f"Bearer {KEY}"
        assert _everywhere_readable(KEY.encode()) == []
        on_disk = [p for p in remote.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
        assert on_disk == []
        assert not (remote / "home" / "config.toml").exists(), "the host's runtime read the daemon's"
        assert os.environ.get("FAR_KEY") is None
    finally:
        await daemon.stop()


async def test_a_parent_on_the_host_launches_a_child_through_its_own_link(tmp_path, sshd, remote):
    """A remote parent's subagent_launch reaches the daemon over the runtime's own forwarded socket:
    the child runs on the same host and its completion reaches the parent. The link lets only that
    parent's subagent commands through: anything else on it is refused."""
    models = [
        {"id": "m", "context_window": 100_000},
        {"id": "kid", "context_window": 100_000, "script": "kid.json"},
    ]
    steps = [
        tool_step("subagent_launch", {"name": "helper", "task": "count to three", "model": "test/kid"}),
        text_step("launched"),
        text_step("the child reported"),
    ]
    home = write_scripted_home(tmp_path / "home", steps, models=models, extra_toml=host_toml(sshd, remote))
    (home / "kid.json").write_text(
        '{"loop": true, "steps": [{"blocks": [{"type": "text", "text": "one two three"}]}]}'
    )
    config = home / "config.toml"
    config.write_text(config.read_text().replace('script = "kid.json"', f'script = "{home / "kid.json"}"'))
    absolute_script(home)
    daemon = await DaemonProcess.start(home)
    try:
        client = await daemon.unix()
        parent = await _create(client, remote / "project", host="box")
        await client.request({"type": "agent.attach", "id": "a", "agent_id": parent})
        await client.send({"type": "prompt", "agent_id": parent, "message": "delegate"})

        seen = await client.until(
            lambda m: (
                m.get("type") == "permission_request"
                or (m.get("type") == "subagent_run_changed" and m.get("state") == "completed")
            )
        )
        if seen[-1]["type"] == "permission_request":
            await client.send(
                {
                    "type": "permission_response",
                    "agent_id": parent,
                    "request_id": seen[-1]["request_id"],
                    "decision": "allow",
                }
            )
        await client.until(
            lambda m: (
                m.get("type") == "message_complete"
                and m.get("agent_id") == parent
                and "the child reported" in str(m.get("message"))
            )
        )
        listed, _ = await client.request({"type": "agent.list", "id": "l"})
        child = next(a for a in listed["data"]["agents"] if a.get("parent_agent_id") == parent)
        assert child["host"] == "box"
        links = list(control_dir(daemon.home).glob("link-*.sock"))
        assert len(links) >= 1
        aliases = []
        for path in links:  # the parent's link, and the child's own while it runs
            probe = await UnixClient.connect(path)
            refused, _ = await probe.request({"type": "agent.list", "id": "x"})
            assert refused["success"] is False
            assert "only subagent commands" in refused["error"]["message"]
            # whatever parent the line names, the link's own agent is asked about
            status, _ = await probe.request(
                {"type": "subagent.status", "id": "s", "parent_agent_id": "agent-0000000000000000"}
            )
            assert status["success"] is True, status
            aliases += [a["alias"] for a in status["data"]["agents"]]
            await probe.close()
        assert aliases == ["helper"]
    finally:
        await daemon.stop()


async def test_the_file_tree_of_a_remote_agent_is_read_on_its_host(tmp_path, sshd, remote):
    """fs.list / fs.read of an agent on a host run there (the host's own shard, over ssh): the host's
    SHARD_HOME inside the folder is hidden as that host's, and a file is read from the host."""
    daemon = await _daemon(tmp_path, sshd, remote, [text_step("hi")])
    try:
        client = await daemon.unix()
        (remote / "notes.txt").write_text("on the host\n")
        agent_id = await _create(client, remote, host="box")  # its folder holds the host's SHARD_HOME
        listed, _ = await client.request({"type": "fs.list", "id": "l", "agent_id": agent_id})
        assert listed["success"] is True, listed
        names = [e["name"] for e in listed["data"]["entries"]]
        assert "notes.txt" in names
        assert "home" not in names, "the host's SHARD_HOME is never shown"
        read, _ = await client.request(
            {"type": "fs.read", "id": "r", "agent_id": agent_id, "path": "notes.txt"}
        )
        assert read["data"]["text"] == "on the host\n"
        secret, _ = await client.request(
            {"type": "fs.read", "id": "s", "agent_id": agent_id, "path": "home/config.toml"}
        )
        assert secret["success"] is False
        outside, _ = await client.request(
            {"type": "fs.read", "id": "o", "agent_id": agent_id, "path": "../x"}
        )
        assert outside["error"]["code"] == "INVALID_REQUEST"
    finally:
        await daemon.stop()


async def test_a_host_with_its_own_config_gets_no_key_and_answers_with_its_own_provider(
    tmp_path, sshd, remote
):
    """`config = "remote"`: the runtime on the host reads the host's own config.toml (its own
    scripted provider answers, not the daemon's). Such a handoff carries no key
    (tests/test_secrets.py::test_a_handoff_without_keys_carries_none)."""
    far_home = remote / "home"
    write_scripted_home(far_home, [text_step("the host's own model")], loop=True)
    absolute_script(far_home)
    home = write_scripted_home(
        tmp_path / "home",
        [text_step("the daemon's model")],
        extra_toml=host_toml(sshd, remote, extra='config = "remote"'),
    )
    absolute_script(home)
    daemon = await DaemonProcess.start(home, env={"OPENAI_API_KEY": KEY})
    try:
        client = await daemon.unix()
        agent_id = await _create(client, remote / "project", host="box")
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        events = await _turn(client, agent_id, "hello")
        assert any(
            "the host's own model" in str(m.get("message")) for m in events if m["type"] == "message_complete"
        )
    finally:
        await daemon.stop()


async def test_the_sandbox_confines_commands_on_the_host(tmp_path, sshd, remote):
    """sandbox "auto" on a remote agent: its bash runs confined by the host's bubblewrap (a private
    /tmp there: a file it makes in /tmp is not on the host's /tmp) and without asking."""
    marker = f"shard-escape-{os.getpid()}-{id(tmp_path)}"
    steps = [tool_step("bash", {"command": f"touch /tmp/{marker} && echo made"}), text_step("done")]
    daemon = await _daemon(tmp_path, sshd, remote, steps)
    try:
        client = await daemon.unix()
        agent_id = await _create(client, remote / "project", host="box", sandbox="auto")
        await client.request({"type": "agent.attach", "id": "a", "agent_id": agent_id})
        events = await _turn(client, agent_id, "try it")
        assert not [m for m in events if m["type"] == "permission_request"], "auto: confined, no prompt"
        results = [m for m in events if m["type"] == "tool_result"]
        assert results
        assert "made" in str(results[-1])
        assert not Path(f"/tmp/{marker}").exists(), "the command's /tmp was the sandbox's own"
    finally:
        await daemon.stop()

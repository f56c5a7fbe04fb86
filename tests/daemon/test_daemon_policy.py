"""Daemon policy questions: one trust level for every client, capabilities that come from the
runtime, catalog reads that never wake a stopped runtime, and manifest fields only the daemon sets."""

from __future__ import annotations

import pytest
from daemon_helpers import attach, connect, create_agent, runtime_pids

from shard.testing import AgentProcess, text_step, tool_step

REASONING_MODEL = [{"id": "m", "context_window": 100_000, "reasoning_levels": ["low", "high"]}]


async def test_any_client_may_drive_answer_and_kill_any_agent(daemon_factory, transport, project):
    """Agents belong to no client: one created by A is prompted by B, B's permission answer counts,
    and C kills it.

    Covers: R4.3.1, R4.3.2, R4.3.3, R4.3.4
    """
    daemon = await daemon_factory([tool_step("touch", {"path": "b.txt"}), text_step("done")])
    a = await connect(daemon, transport)
    b = await connect(daemon, transport)
    c = await connect(daemon, transport)
    agent = await create_agent(a, project)
    await attach(b, agent)
    accepted, _ = await b.request({"type": "prompt", "id": "p", "agent_id": agent, "message": "touch"})
    assert accepted["success"] is True
    request = (await b.until_type("permission_request"))[-1]  # the gate still asks (R4.3.4)
    await b.send(
        {
            "type": "permission_response",
            "agent_id": agent,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    await b.idle(agent_id=agent)
    assert (project / "b.txt").exists()
    killed, _ = await c.request({"type": "agent.kill", "id": "k", "agent_id": agent, "force": True})
    assert killed["success"] is True
    assert runtime_pids(daemon.home) == []


async def test_sync_capabilities_are_the_runtimes_own(daemon_factory, home, project):
    """The daemon's sync carries exactly the capabilities the runtime itself advertises in its hello.

    Covers: R9.1.11, R9.1.8, R7.9
    """
    daemon = await daemon_factory([text_step("x")], models=REASONING_MODEL)
    client = await daemon.unix()
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    direct = await AgentProcess.start(home, project)
    try:
        hello = await direct.next()
    finally:
        await direct.close_stdin()
        await direct.proc.wait()
    assert hello["type"] == "hello"
    assert sorted(sync["capabilities"]) == sorted(hello["capabilities"])
    assert "reasoning-catalog" in sync["capabilities"]
    assert "reasoning-catalog" not in (client.seen[0]["capabilities"])


async def test_catalog_reads_never_wake_a_stopped_runtime(daemon_factory, project):
    """list_modes and list_reasoning_levels on a stopped runtime are CONFLICT and start nothing, and
    so is list_models (our choice: docs/protocol.md); set_reasoning_level (like any other work)
    restores it and applies.

    Covers: R9.2.16, R9.2.37, R9.2.38, R6.4.15
    """
    daemon = await daemon_factory([text_step("x")], models=REASONING_MODEL)
    client = await daemon.unix()
    agent = await create_agent(client, project)
    await attach(client, agent)
    stop, _ = await client.request({"type": "agent.terminate", "id": "t", "agent_id": agent})
    assert stop["data"]["deferred"] is False
    for command in ("list_modes", "list_reasoning_levels", "list_models"):
        refused, _ = await client.request({"type": command, "id": command, "agent_id": agent})
        assert refused["success"] is False
        assert refused["error"]["code"] == "CONFLICT"
        assert runtime_pids(daemon.home) == []
    status, _ = await client.request({"type": "agent.status", "id": "s", "agent_id": agent})
    assert status["data"]["agents"][0]["runtime_state"] == "stopped"
    applied, _ = await client.request(
        {"type": "set_reasoning_level", "id": "r", "agent_id": agent, "model": "test/m", "effort": "high"}
    )
    assert applied["success"] is True, applied
    assert len(runtime_pids(daemon.home)) == 1
    levels, _ = await client.request({"type": "list_reasoning_levels", "id": "l", "agent_id": agent})
    assert levels["data"]["active"] == "high"


@pytest.mark.no_local_runtimes
async def test_manifest_fields_are_set_by_the_daemon_only(daemon_factory, project):
    """agent.create carrying a managed-child manifest field is refused, naming the field, and
    creates nothing.

    Covers: R10.1.6
    """
    daemon = await daemon_factory([text_step("x")])
    client = await daemon.unix()
    for field, value in (
        ("system_prompt", "obey me"),
        ("depth", 3),
        ("alias", "bob"),
        ("definition_name", "reviewer"),
        ("display_name", "reviewer · bob"),
        ("names", ["a"]),
        ("launch_policy", {"maxTasks": 2, "maxDepth": 1}),
    ):
        refused, _ = await client.request(
            {"type": "agent.create", "id": field, "cwd": str(project), field: value}
        )
        assert refused["success"] is False
        assert refused["error"]["code"] == "INVALID_REQUEST"
        assert field in refused["error"]["message"]
    listing, _ = await client.request({"type": "agent.list", "id": "l"})
    assert listing["data"]["agents"] == []

"""MCP tools in a real ``shard agent --stdio`` runtime on the scripted provider, with real demo
servers: the gate, grants, read-only tools, the result reaching the model, every failure mode as one
clear error and a status detail, abort, and no server left behind when the runtime ends."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.mcp._servers import alive, gone, pids, server_toml
from shard.testing import AgentProcess, Runtimes, recorded_requests, text_step, tool_step, write_scripted_home


@pytest.fixture
async def start(home: Path, project: Path) -> AsyncIterator[Any]:
    """``await start(steps, servers_toml, *args, env=…)``: a runtime whose config has those servers."""
    runtimes = Runtimes()

    async def _start(steps: list[dict[str, Any]], servers: str, *args: str, **kw: Any) -> AgentProcess:
        write_scripted_home(home, steps, extra_toml=servers)
        return await runtimes.start(home, project, *args, **kw)

    yield _start
    await runtimes.close()


async def _answer(agent: AgentProcess, decision: str = "allow") -> dict[str, Any]:
    request = (await agent.until_type("permission_request"))[-1]
    await agent.send(
        {"type": "permission_response", "request_id": request["request_id"], "decision": decision}
    )
    return request


async def _result(agent: AgentProcess) -> dict[str, Any]:
    return (await agent.until_type("tool_result"))[-1]


def _details(agent: AgentProcess) -> list[str]:
    return [m["detail"] for m in agent.seen if m["type"] == "status" and "detail" in m]


async def test_the_gate_asks_grants_work_read_only_runs_and_the_result_reaches_the_model(
    start, home, tmp_path
):
    """Servers start at the first turn, not before; a mutating MCP tool asks, allow_always lets the
    same call through after, a read-only one never asks; the model sees the tools and the result;
    the server is gone when the runtime exits.

    Covers: R9.5.1, R9.5.9
    """
    written = tmp_path / "pids"
    steps = [
        tool_step("demo__shout", {"text": "hi"}),
        tool_step("demo__shout", {"text": "hi"}),
        tool_step("demo__add", {"a": 2, "b": 3}),
        text_step("done"),
    ]
    agent = await start(steps, server_toml(env={"DEMO_PIDS": str(written)}))
    assert pids(written) == [], "no server starts before a turn needs it"
    await agent.send({"type": "prompt", "message": "go"})
    request = await _answer(agent, "allow_always")
    assert request["tool_name"] == "demo__shout"
    assert request["input"] == {"text": "hi"}
    read = await agent.idle()
    assert [m["type"] for m in read].count("permission_request") == 0, "the grant and read-only: no more asks"
    results = [m for m in agent.seen if m["type"] == "tool_result"]
    assert [r["content"] for r in results] == [
        {"kind": "text", "text": "HI!"},
        {"kind": "text", "text": "HI!"},
        {"kind": "text", "text": "5"},
    ]
    calls = [m for m in agent.seen if m["type"] == "tool_call"]
    assert [c["read_only"] for c in calls] == [False, False, True]
    assert "starting MCP servers: demo" in _details(agent)
    requests = recorded_requests(home)
    assert {"demo__shout", "demo__add", "demo__hang"} <= set(requests[0]["tools"])
    assert "HI!" in str(requests[1]["messages"][-1])
    assert len(pids(written)) == 1
    assert await agent.finish() == 0
    assert not alive(pids(written)[0]), "the server is stopped with the runtime"


@pytest.mark.slow  # the SDK gives a server 2 s to leave after its stdin closes, then SIGTERM
async def test_a_server_that_outlives_its_stdin_is_stopped_when_the_runtime_exits(start, tmp_path):
    written = tmp_path / "pids"
    agent = await start(
        [tool_step("demo__add", {"a": 1, "b": 2}), text_step("ok")],
        server_toml("demo", "--linger", env={"DEMO_PIDS": str(written)}),
    )
    await agent.send({"type": "prompt", "message": "go"})
    await agent.idle()
    [pid] = pids(written)
    assert alive(pid)
    assert await agent.finish() == 0
    assert not alive(pid), "an orphan: the runtime left its MCP server running"


async def test_a_denied_call_never_reaches_the_server_and_plan_mode_refuses_mutating_tools(start):
    steps = [
        tool_step("demo__shout", {"text": "a"}),
        tool_step("demo__add", {"a": 1, "b": 1}),
        text_step("ok"),
    ]
    agent = await start(steps, server_toml(), "--mode", "plan")
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    assert "permission_request" not in [m["type"] for m in read]
    refused, added = [m for m in read if m["type"] == "tool_result"]
    assert refused["is_error"] is True
    assert "plan mode" in refused["content"]["message"]
    assert added["content"] == {"kind": "text", "text": "2"}


@pytest.mark.slow
async def test_a_hanging_call_and_a_crash_mid_call_are_tool_errors_and_the_server_comes_back(start, tmp_path):
    written = tmp_path / "pids"
    steps = [
        tool_step("demo__hang", {}),
        tool_step("demo__crash", {}),
        tool_step("demo__shout", {"text": "again"}),
        text_step("done"),
    ]
    agent = await start(steps, server_toml(call_timeout=1, env={"DEMO_PIDS": str(written)}))
    await agent.send({"type": "prompt", "message": "go"})
    await _answer(agent)
    hung = await _result(agent)
    timed_out = "The MCP server 'demo' did not answer 'hang' within 1 s (call_timeout)."
    assert hung["is_error"] is True
    assert hung["content"]["message"] == timed_out
    await _answer(agent)
    crashed = await _result(agent)
    died = "The MCP server 'demo' died during the call. It is started again at its next call."
    assert crashed["content"]["message"] == died
    await _answer(agent)
    assert (await _result(agent))["content"] == {"kind": "text", "text": "AGAIN!"}
    await agent.idle()
    assert timed_out in _details(agent)
    assert died in _details(agent)
    assert not [m for m in agent.seen if m["type"] == "error"], "reported in the tool results, not as errors"
    assert len(pids(written)) == 2, "started again after the crash"
    assert await agent.finish() == 0
    assert not any(alive(pid) for pid in pids(written))


@pytest.mark.slow
async def test_a_server_that_does_not_start_is_one_error_and_the_turn_goes_on(start, home, tmp_path):
    """… and no process of it survives the runtime, even one killed at once (SIGKILL: it cleans
    nothing up) — the server, which leads a session of its own, used to stay behind as an orphan."""
    written = tmp_path / "pids"
    hang = server_toml(
        "slow", "--with-child", "--hang-at-start", start_timeout=2.0, env={"DEMO_PIDS": str(written)}
    )
    agent = await start([text_step("fine")], hang + server_toml("demo"))
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    line = "MCP server 'slow' did not start within 2 s (start_timeout)"
    errors = [m for m in read if m["type"] == "error"]
    assert errors == [{"type": "error", "code": "TOOL_ERROR", "message": line, "fatal": False}]
    assert line in _details(agent)
    assert any(m["type"] == "message_complete" and "fine" in str(m["message"]) for m in read)
    offered = set(recorded_requests(home)[0]["tools"])
    assert "demo__shout" in offered
    assert not any(name.startswith("slow__") for name in offered)
    await agent.kill()
    assert len(pids(written)) == 2, "the server and its child"
    assert await gone(pids(written), within=1.0)


async def test_abort_during_a_call_cancels_it(start, tmp_path):
    written = tmp_path / "pids"
    agent = await start(
        [tool_step("demo__hang", {}), text_step("after")], server_toml(env={"DEMO_PIDS": str(written)})
    )
    await agent.send({"type": "prompt", "message": "go"})
    await _answer(agent)
    await agent.until_type("tool_call")
    response, read = await agent.request({"type": "abort", "id": "a1"}, timeout=10)
    assert response["success"] is True
    assert {"type": "status", "status": "idle"} in read, "the abort is answered once the work wound down"
    result = next(m for m in read if m["type"] == "tool_result")
    assert result["is_error"] is True
    assert "Aborted" in result["content"]["message"]
    agent.proc.send_signal(signal.SIGTERM)
    assert await agent.finish() == 0
    assert not any(alive(pid) for pid in pids(written)), "SIGTERM: the runtime stops its servers first"


async def test_the_server_gets_no_secret_from_the_runtime(start):
    steps = [tool_step("demo__env_names", {}), text_step("ok")]
    env = {"OPENAI_API_KEY": "sk-do-not-leak", "ANTHROPIC_API_KEY": "sk-ant-x", "GITHUB_TOKEN": "gh"}
    agent = await start(steps, server_toml(pass_env=["GITHUB_TOKEN"]), env=env)
    await agent.send({"type": "prompt", "message": "go"})
    await _answer(agent)
    names = (await _result(agent))["content"]["text"]
    assert "GITHUB_TOKEN" in names
    assert "OPENAI_API_KEY" not in names
    assert "ANTHROPIC_API_KEY" not in names
    assert "SHARD_HOME" not in names


async def test_an_http_server_with_a_header_from_the_environment(start, http_url):
    steps = [tool_step("web__header", {"name": "X-Api-Key"}), text_step("ok")]
    servers = server_toml("web", url=http_url, headers_env={"X-Api-Key": "WEB_KEY"})
    agent = await start(steps, servers, env={"WEB_KEY": "k-42"})
    await agent.send({"type": "prompt", "message": "go"})
    request = await _answer(agent)
    assert request["tool_name"] == "web__header"
    assert (await _result(agent))["content"] == {"kind": "text", "text": "k-42"}
    await agent.idle()
    assert "k-42" not in str([m for m in agent.seen if m["type"] != "tool_result"]), "no header value leaks"

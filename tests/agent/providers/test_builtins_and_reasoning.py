"""Built-in providers from ANTHROPIC_API_KEY / OPENAI_API_KEY (no config.toml), the catalog without
them, and reasoning levels end to end: advertised in hello/sync, listed, switched, and applied to the
next provider request (anthropic thinking budget, openai reasoning_effort)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from shard.agent.catalog import ANTHROPIC_MODELS, OPENAI_MODELS
from shard.testing import AgentProcess, types

from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home

ANTHROPIC_KEY = "sk-ant-test-0b1c2d3e4f5a6978"
OPENAI_KEY = "sk-proj-test-9a8b7c6d5e4f3021"
REASONING = {"reasoning-catalog", "reasoning-switch"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
async def spawn(
    tmp_path: Path, project: Path, server: ProviderServer
) -> AsyncIterator[Callable[..., Awaitable]]:
    """``await spawn(env)`` → (agent, hello, sync) with SHARD_HOME = tmp_path/home."""
    procs: list[AgentProcess] = []
    (tmp_path / "home").mkdir(exist_ok=True)

    async def _spawn(env: dict[str, str]) -> tuple[AgentProcess, dict, dict]:
        proc = await AgentProcess.start(tmp_path / "home", project, env=env)
        procs.append(proc)
        hello, sync = await proc.handshake()
        return proc, hello, sync

    yield _spawn
    for proc in procs:
        await proc.kill()


def _builtin_env(server: ProviderServer, *, anthropic: bool = True, openai: bool = True) -> dict[str, str]:
    env = {}
    if anthropic:
        env |= {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": server.anthropic_url}
    if openai:
        env |= {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": server.openai_url}
    return env


async def test_builtin_models_are_listed_when_keys_are_set(spawn, server, tmp_path):
    """With both key variables set and no config.toml, list_models offers the built-in anthropic and
    openai models (plus the scripted demo), the default is the first built-in provider's first model,
    and no key value is in the catalog.

    Covers: R9.2.22, R9.2.23
    """
    assert not (tmp_path / "home" / "config.toml").exists()
    agent, _, _ = await spawn(_builtin_env(server))
    response, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert response["success"] is True
    ids = [m["id"] for m in response["data"]["models"]]
    expected = [f"anthropic/{m.id}" for m in ANTHROPIC_MODELS] + [f"openai/{m.id}" for m in OPENAI_MODELS]
    assert [i for i in ids if i != "scripted/demo"] == expected
    assert "scripted/demo" in ids
    assert response["data"]["active"]["id"] == "anthropic/claude-sonnet-5-5"
    text = str(response)
    assert ANTHROPIC_KEY not in text
    assert OPENAI_KEY not in text
    assert server.requests == []


async def test_builtin_anthropic_default_works_end_to_end(spawn, server):
    """Only ANTHROPIC_API_KEY (+ ANTHROPIC_BASE_URL at the test server): the default model is the
    built-in claude-sonnet-5-5, advertised with reasoning controls, and a prompt streams from the
    server with the key in the request's auth header and adaptive thinking at medium effort.

    Covers: R9.2.31, R9.4.18
    """
    server.replies.append(Stream("anthropic/text.sse"))
    agent, hello, sync = await spawn(_builtin_env(server, openai=False))
    assert set(hello["capabilities"]) >= REASONING
    assert sync["capabilities"] == hello["capabilities"]
    await agent.send({"type": "prompt", "id": "p1", "message": "hi"})
    read = await agent.idle()
    assert read[0]["success"] is True, read[0]
    assert "error" not in types(read)
    final = [m for m in read if m["type"] == "message_complete"][-1]["message"]
    assert final["content"] == [{"type": "text", "text": "Hello, world!"}]
    usage = next(m for m in read if m["type"] == "usage")
    assert usage["model"] == "anthropic/claude-sonnet-5-5"
    # built-in models carry no prices (they cannot be verified offline), so no cost is claimed
    assert "cost" not in usage
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.body["model"] == "claude-sonnet-5-5"
    # the built-in default level is adaptive thinking at medium effort
    assert request.body["thinking"] == {"type": "adaptive"}
    assert request.body["output_config"] == {"effort": "medium"}
    headers = request.headers
    assert ANTHROPIC_KEY in (
        headers.get("x-api-key", ""),
        headers.get("Authorization", "").removeprefix("Bearer "),
    )


async def test_builtin_openai_respects_base_url(spawn, server):
    """Only OPENAI_API_KEY with OPENAI_BASE_URL: the default is openai/gpt-5 and its request goes to
    the configured base URL with its default reasoning_effort.

    Covers: R9.2.22
    """
    server.replies.append(Stream("openai/text.sse"))
    agent, _, _ = await spawn(_builtin_env(server, anthropic=False))
    response, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert response["data"]["active"]["id"] == "openai/gpt-5.5"
    await agent.send({"type": "prompt", "message": "hi"})
    read = await agent.idle()
    assert "error" not in types(read)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-5.5"
    assert request.body["reasoning_effort"] == "medium"
    assert request.headers["Authorization"] == f"Bearer {OPENAI_KEY}"


async def test_without_keys_only_the_demo_and_a_prompt_explains(spawn, server, tmp_path):
    """No key variables and no config.toml: the catalog holds only scripted/demo, and a prompt is
    refused with an explanation of how to configure a provider in config.toml."""
    agent, hello, _ = await spawn({})
    assert not REASONING & set(hello["capabilities"])
    response, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert [m["id"] for m in response["data"]["models"]] == ["scripted/demo"]
    prompt, _ = await agent.request({"type": "prompt", "id": "p1", "message": "hi"})
    assert prompt["success"] is False
    message = prompt["error"]["message"]
    assert str(tmp_path / "home" / "config.toml") in message
    assert "[[providers]]" in message
    assert "kind" in message
    assert server.requests == []


ANTH_REASONING = (
    '[{ id = "claude-test", context_window = 200000, max_output_tokens = 8192, default_reasoning = "off", '
    'reasoning_levels = [{ id = "off", label = "Off", budget_tokens = 0 }, '
    '{ id = "deep", label = "Deep", description = "Think hard", budget_tokens = 10000 }] }]'
)
OA_REASONING = (
    '[{ id = "plain", context_window = 32768 }, '
    '{ id = "thinker", context_window = 128000, default_reasoning = "quick", reasoning_levels = ['
    '{ id = "quick", label = "Quick", effort = "low" }, '
    '{ id = "thorough", label = "Thorough", effort = "high" }] }]'
)


async def test_anthropic_reasoning_level_changes_the_next_thinking_budget(spawn, server, tmp_path):
    """A configured anthropic model with levels: hello and sync advertise reasoning-catalog and
    reasoning-switch; list_reasoning_levels returns the configured levels with the active one;
    after set_reasoning_level the next request carries thinking {enabled, budget_tokens} with
    max_tokens above the budget, while the request before it had no thinking.

    Covers: R9.2.31, R9.2.33, R9.2.42
    """
    write_home(
        tmp_path / "home",
        provider_toml("anth", "anthropic", server.anthropic_url, ANTH_REASONING),
        default_model="anth/claude-test",
    )
    server.replies.extend([Stream("anthropic/text.sse"), Stream("anthropic/thinking.sse")])
    agent, hello, sync = await spawn({KEY_ENV: KEY})
    assert set(hello["capabilities"]) >= REASONING
    assert set(sync["capabilities"]) >= REASONING
    levels, _ = await agent.request({"type": "list_reasoning_levels", "id": "lr"})
    assert levels["success"] is True
    assert levels["data"] == {
        "model": {
            "id": "anth/claude-test",
            "provider": "anth",
            "model": "claude-test",
            "context_window": 200000,
            "context_window_source": "config",
        },
        "levels": [
            {"id": "off", "label": "Off"},
            {"id": "deep", "label": "Deep", "description": "Think hard"},
        ],
        "active": "off",
        "effective": "next_provider_call",
    }
    await agent.send({"type": "prompt", "message": "one"})
    await agent.idle()
    assert "thinking" not in server.requests[0].body

    changed, _ = await agent.request(
        {"type": "set_reasoning_level", "id": "sr", "model": "anth/claude-test", "effort": "deep"}
    )
    assert changed["success"] is True
    assert (changed["data"]["previous"], changed["data"]["active"]) == ("off", "deep")
    assert len(server.requests) == 1
    await agent.send({"type": "prompt", "message": "two"})
    read = await agent.idle()
    assert "error" not in types(read)
    body = server.requests[1].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10000}
    assert body["max_tokens"] > 10000
    thinking = [m for m in read if m["type"] == "message_delta" and m["kind"] == "thinking"]
    assert "".join(m["text_delta"] for m in thinking) == "The user asks for 2 + 2. That is 4."


async def test_openai_model_switch_and_reasoning_effort(spawn, server, tmp_path):
    """Start on a model without levels (no reasoning controls, no reasoning_effort sent); switch to
    one with levels: model_changed carries the new capabilities, the next request sends the default
    level's effort, and after set_reasoning_level the following request sends the new effort.

    Covers: R9.2.27, R9.2.31, R9.2.42, R10.2.3
    """
    write_home(
        tmp_path / "home",
        provider_toml("local", "openai", server.openai_url, OA_REASONING),
        default_model="local/plain",
    )
    server.replies.extend([Stream("openai/text.sse") for _ in range(3)])
    agent, hello, _ = await spawn({KEY_ENV: KEY})
    assert not REASONING & set(hello["capabilities"])
    refused, _ = await agent.request({"type": "list_reasoning_levels", "id": "lr0"})
    assert refused["success"] is False
    await agent.send({"type": "prompt", "message": "one"})
    await agent.idle()
    assert "reasoning_effort" not in server.requests[0].body

    switched, before = await agent.request({"type": "set_model", "id": "sm", "model": "local/thinker"})
    assert switched["success"] is True
    changed = next(m for m in before if m["type"] == "model_changed")
    assert set(changed["capabilities"]) >= REASONING
    levels, _ = await agent.request({"type": "list_reasoning_levels", "id": "lr1"})
    assert [lv["id"] for lv in levels["data"]["levels"]] == ["quick", "thorough"]
    assert levels["data"]["active"] == "quick"
    await agent.send({"type": "prompt", "message": "two"})
    await agent.idle()
    assert server.requests[1].body["model"] == "thinker"
    assert server.requests[1].body["reasoning_effort"] == "low"

    await agent.request(
        {"type": "set_reasoning_level", "id": "sr", "model": "local/thinker", "effort": "thorough"}
    )
    await agent.send({"type": "prompt", "message": "three"})
    await agent.idle()
    assert server.requests[2].body["reasoning_effort"] == "high"


async def test_mid_stream_switches_apply_at_the_next_call_after_tools(spawn, server, tmp_path, project):
    """One turn of three provider calls (read, read, answer). While the first stream is held open,
    set_model is answered at once and the stream finishes untouched; the call after the tool runs
    uses the new model. While the second stream is held, set_reasoning_level likewise applies only
    to the third call.

    Covers: R9.2.25, R9.2.26, R9.2.27, R9.2.42
    """
    (project / "README.md").write_text("# Demo\n")
    write_home(
        tmp_path / "home",
        provider_toml("local", "openai", server.openai_url, OA_REASONING),
        default_model="local/plain",
    )
    first = Stream("openai/tool_call.sse", hold_after=2)
    second = Stream("openai/tool_call.sse", hold_after=2)
    server.replies.extend([first, second, Stream("openai/answer.sse")])
    agent, _, _ = await spawn({KEY_ENV: KEY})
    await agent.send({"type": "prompt", "message": "read it twice"})

    await agent.until_type("message_delta")  # the first stream is in flight, held by the server
    switched, _ = await agent.request({"type": "set_model", "id": "sm", "model": "local/thinker"})
    assert switched["success"] is True
    assert len(server.requests) == 1
    first.release.set()

    await agent.until(lambda m: m["type"] == "tool_result")
    await agent.until_type("message_delta")  # the second stream is in flight
    changed, _ = await agent.request(
        {"type": "set_reasoning_level", "id": "sr", "model": "local/thinker", "effort": "thorough"}
    )
    assert changed["success"] is True
    assert len(server.requests) == 2
    second.release.set()

    read = await agent.idle()
    assert "error" not in types(agent.seen)
    calls = [m for m in agent.seen if m["type"] == "message_complete" and m["message"]["role"] == "assistant"]
    assert [c["message"]["content"][0]["type"] for c in calls] == ["tool_call", "tool_call", "text"]
    assert calls[0]["message"]["content"][0]["args"] == {"path": "README.md"}
    assert "turn_end" in types(read)
    bodies = server.bodies()
    assert [b["model"] for b in bodies] == ["plain", "thinker", "thinker"]
    assert [b.get("reasoning_effort") for b in bodies] == [None, "low", "high"]

"""Modes, models and reasoning levels on a direct connection (PROTOCOL §9.2, §10.2)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from shard.testing import AgentProcess, recorded_requests, text_step

MODELS = [
    {"id": "m", "context_window": 100000},
    {"id": "other", "context_window": 8000},
    {
        "id": "thinker",
        "reasoning_levels": [
            {"id": "low", "label": "Low"},
            {"id": "high", "label": "High", "description": "slow"},
        ],
        "default_reasoning": "low",
    },
    {"id": "broken", "script": "missing-script.json"},
]
REMOTE = '\n[[providers]]\nname = "remote"\nkind = "openai"\napi_key_env = "SECRET_VAR"\n'
REMOTE += 'base_url = "http://127.0.0.1:9/v1"\nmodels = [{ id = "gpt" }]\n'

# The tests marked SHARED read the catalogs or ask for a change that is refused or changes nothing:
# they share a runtime of the module on test/m in build mode (``agent``), or on test/thinker
# (``thinker``), handed over idle with nothing left to read. A test whose subject is a change, a
# flag or a session starts its own with ``start``.
SHARED = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_runtime(start_shared) -> AgentProcess:
    return await start_shared([text_step("ok")], loop=True, models=MODELS, extra_toml=REMOTE)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_thinker(start_shared) -> AgentProcess:
    return await start_shared([text_step("ok")], "--model", "test/thinker", loop=True, models=MODELS)


@pytest_asyncio.fixture(loop_scope="module")
async def agent(shared_runtime: AgentProcess) -> AsyncIterator[AgentProcess]:
    yield await shared_runtime.hand_over()


@pytest_asyncio.fixture(loop_scope="module")
async def thinker(shared_thinker: AgentProcess) -> AsyncIterator[AgentProcess]:
    yield await shared_thinker.hand_over()


@SHARED
async def test_list_modes_catalog(agent):
    """list_modes returns every mode in registration order as {name, description} and the active
    one, which is in the list.

    Covers: R9.2.13, R9.2.14, R9.2.17, R9.2.18, R9.2.19, R9.2.20, R5.1.3
    """
    resp, _ = await agent.request({"type": "list_modes", "id": "lm"})
    assert resp["command"] == "list_modes"
    assert resp["success"] is True
    data = resp["data"]
    assert [m["name"] for m in data["modes"]] == ["build", "plan"]
    assert all(set(m) == {"name", "description"} and m["description"] for m in data["modes"])
    assert data["active"] == "build"
    assert data["active"] in [m["name"] for m in data["modes"]]


async def test_set_mode_change_emits_mode_changed_before_response(start):
    """A real change emits mode_changed before the response {previous_mode, mode}.

    Covers: R9.2.8, R9.2.10, R10.2.5, R10.2.6, R9.1.5
    """
    agent = await start([text_step("ok")])
    await agent.handshake()
    resp, before = await agent.request({"type": "set_mode", "id": "sm", "mode": "plan"})
    assert before == [{"type": "mode_changed", "previous_mode": "build", "mode": "plan"}]
    assert resp["data"] == {"previous_mode": "build", "mode": "plan"}
    listed, _ = await agent.request({"type": "list_modes", "id": "lm"})
    assert listed["data"]["active"] == "plan"


@SHARED
async def test_set_mode_idempotent_emits_nothing(agent):
    """Setting the active mode again is acknowledged with no mode_changed.

    Covers: R9.2.9
    """
    resp, before = await agent.request({"type": "set_mode", "id": "sm", "mode": "build"})
    assert before == []
    assert resp["success"] is True
    assert resp["data"] == {"previous_mode": "build", "mode": "build"}
    resp2, before2 = await agent.request({"type": "list_modes", "id": "lm"})
    assert before2 == []
    assert resp2["data"]["active"] == "build"


async def test_set_mode_unknown_is_not_found_and_keeps_mode(start):
    """An unknown mode is NOT_FOUND; the old mode stays and no event is sent.

    Covers: R9.2.11, R9.2.12, R8.1
    """
    agent = await start([text_step("ok")], "--mode", "plan")
    await agent.handshake()
    resp, before = await agent.request({"type": "set_mode", "id": "sm", "mode": "yolo"})
    assert before == []
    assert resp["success"] is False
    assert resp["error"]["code"] == "NOT_FOUND"
    assert resp["command"] == "set_mode"
    assert resp["id"] == "sm"
    listed, between = await agent.request({"type": "list_modes", "id": "lm"})
    assert between == []
    assert listed["data"]["active"] == "plan"


async def test_plan_mode_refuses_mutating_tools_without_running_them(start, project):
    """In plan mode a mutating tool is refused before it runs — no tool_call event, a tool error the
    model sees — while read-only tools run as usual.

    Covers: R9.4.9, R9.4.11, R8.18
    """
    steps = [
        {
            "blocks": [
                {"type": "tool_call", "name": "touch", "args": {"path": "new.txt"}},
                {"type": "tool_call", "name": "read", "args": {"path": "config.json"}},
            ]
        },
        text_step("ok"),
    ]
    agent = await start(steps, "--mode", "plan")
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.idle()
    calls = [m for m in read if m["type"] == "tool_call"]
    results = [m for m in read if m["type"] == "tool_result"]
    assert [c["name"] for c in calls] == ["read"], "the refused tool never starts"
    assert calls[0]["read_only"] is True
    assert results[0]["is_error"] is True
    assert "plan mode" in results[0]["content"]["message"]
    assert results[1]["is_error"] is False
    assert not (project / "new.txt").exists()


@SHARED
async def test_list_models_is_secret_free(agent):
    """list_models returns the catalog of ModelDescriptors and the active selection; nothing in it
    comes from the provider's secrets.

    Covers: R9.2.22, R9.2.23, R11.0.2
    """
    resp, _ = await agent.request({"type": "list_models", "id": "lm"})
    data = resp["data"]
    ids = [m["id"] for m in data["models"]]
    assert ids[:4] == ["test/m", "test/other", "test/thinker", "test/broken"]
    assert "remote/gpt" in ids
    assert "scripted/demo" in ids
    for m in data["models"]:
        assert m["id"] == f"{m['provider']}/{m['model']}"
        assert set(m) <= {"id", "provider", "model", "context_window", "context_window_source", "label"}
    assert data["active"]["id"] == "test/m"
    assert data["active"]["context_window"] == 100000
    assert data["active"]["context_window_source"] == "config"
    assert "SECRET_VAR" not in str(resp)
    assert "api_key" not in str(resp)


async def test_set_model_mid_stream_applies_at_next_provider_call(start, home):
    """set_model during a stream is acknowledged at once with model_changed, does not interrupt the
    stream, and the next provider call (after the tool ran) uses the new model, as do later ones.

    Covers: R9.2.24, R9.2.25, R9.2.26, R9.2.27, R9.2.28, R10.2.1, R10.2.2, R10.2.3
    """
    steps = [
        {
            "blocks": [
                {"type": "text", "text": "streaming a while"},
                {"type": "pause", "ms": 600},
                {"type": "tool_call", "name": "ls", "args": {}},
            ]
        },
        text_step("second call"),
        text_step("third call"),
    ]
    agent = await start(steps, models=MODELS)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    await agent.until_type("message_delta")
    resp, before = await agent.request({"type": "set_model", "id": "sw", "model": "test/other"})
    assert not any(m["type"] == "message_complete" for m in before), "acknowledged before the stream ended"
    changed = next(m for m in before if m["type"] == "model_changed")
    assert changed["previous"]["id"] == "test/m"
    assert changed["active"]["id"] == "test/other"
    assert changed["effective"] == "next_provider_call"
    assert changed["capabilities"][:2] == ["streaming-deltas", "mode-catalog"]
    assert "agent_id" not in changed
    assert resp["data"]["previous"]["id"] == "test/m"
    assert resp["data"]["active"] == {
        "id": "test/other",
        "provider": "test",
        "model": "other",
        "context_window": 8000,
        "context_window_source": "config",
        "label": "scripted: offline deterministic script, not an LLM",
    }
    assert resp["data"]["effective"] == "next_provider_call"
    read = await agent.idle()
    first_complete = next(m for m in read if m["type"] == "message_complete")
    assert first_complete["message"]["content"][0]["text"] == "streaming a while", "stream not cut"
    await agent.send({"type": "prompt", "message": "again"})
    await agent.idle()
    assert [r["model"] for r in recorded_requests(home)] == ["m", "other", "other"]
    listed, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert listed["data"]["active"]["id"] == "test/other"


@SHARED
async def test_set_model_unknown_is_not_found(agent):
    """An unknown selection is NOT_FOUND and its message says how to add the model (a config.toml
    snippet: a new [[providers]] table, or the model added to the provider that exists); the active
    model and the provider calls are unchanged.

    Covers: R9.2.29, R8.8
    """
    assert agent.home is not None
    recorded = len(recorded_requests(agent.home))
    resp, before = await agent.request({"type": "set_model", "id": "x", "model": "nope/never"})
    assert before == []
    assert resp["error"]["code"] == "NOT_FOUND"
    message = resp["error"]["message"]
    assert message.startswith("unknown model 'nope/never' (models: test/m, ")
    assert '[[providers]] name = "nope"' in message
    assert 'models = ["never"]' in message
    resp, _ = await agent.request({"type": "set_model", "id": "y", "model": "test/never"})
    assert resp["error"]["code"] == "NOT_FOUND"
    assert "list it in provider 'test' in config.toml: models = [..., \"never\"]" in resp["error"]["message"]
    listed, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert listed["data"]["active"]["id"] == "test/m"
    await agent.send({"type": "prompt", "message": "go"})
    await agent.idle()
    assert [r["model"] for r in recorded_requests(agent.home)[recorded:]] == ["m"]


@SHARED
async def test_set_model_provider_construction_failure_is_not_found(agent):
    """A model whose provider cannot be built (its script is missing) is NOT_FOUND and nothing changes.

    Covers: R9.2.30
    """
    resp, before = await agent.request({"type": "set_model", "id": "b", "model": "test/broken"})
    assert before == []
    assert resp["success"] is False
    assert resp["error"]["code"] == "NOT_FOUND"
    assert "missing-script.json" in resp["error"]["message"]
    listed, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert listed["data"]["active"]["id"] == "test/m"


@SHARED
async def test_set_model_same_model_emits_nothing(agent):
    """Selecting the active model again is acknowledged without model_changed."""
    resp, before = await agent.request({"type": "set_model", "id": "s", "model": "test/m"})
    assert before == []
    assert resp["success"] is True
    assert resp["data"]["active"]["id"] == "test/m"


async def test_reasoning_levels_list_and_set(start, home):
    """On a model with levels: list returns the server catalog and the active level; a change emits
    reasoning_level_changed and applies at the next provider call; an idempotent set emits nothing.

    Covers: R9.2.33, R9.2.34, R9.2.39, R9.2.40, R9.2.42, R9.2.32
    """
    agent = await start([text_step("ok"), text_step("ok2")], "--model", "test/thinker", models=MODELS)
    await agent.handshake()
    resp, _ = await agent.request({"type": "list_reasoning_levels", "id": "l"})
    data = resp["data"]
    assert data["model"]["id"] == "test/thinker"
    assert data["levels"] == [
        {"id": "low", "label": "Low"},
        {"id": "high", "label": "High", "description": "slow"},
    ]
    assert data["active"] == "low"
    assert data["effective"] == "next_provider_call"
    await agent.send({"type": "prompt", "message": "go"})
    await agent.idle()
    resp, before = await agent.request(
        {"type": "set_reasoning_level", "id": "s", "model": "test/thinker", "effort": "high"}
    )
    assert before == [
        {
            "type": "reasoning_level_changed",
            "model": data["model"],
            "previous": "low",
            "active": "high",
            "effective": "next_provider_call",
        }
    ]
    assert resp["data"] == {
        "model": data["model"],
        "previous": "low",
        "active": "high",
        "effective": "next_provider_call",
    }
    resp, before = await agent.request(
        {"type": "set_reasoning_level", "id": "s2", "model": "test/thinker", "effort": "high"}
    )
    assert before == []
    assert resp["data"]["previous"] == "high"
    assert resp["data"]["active"] == "high"
    await agent.send({"type": "prompt", "message": "again"})
    await agent.idle()
    assert [r["reasoning"] for r in recorded_requests(home)] == ["low", "high"]


@SHARED
async def test_set_reasoning_level_stale_model_is_conflict(thinker):
    """A picker naming a model that is no longer active gets CONFLICT; nothing changes.

    Covers: R9.2.35, R8.20
    """
    resp, before = await thinker.request(
        {"type": "set_reasoning_level", "id": "s", "model": "test/m", "effort": "high"}
    )
    assert before == []
    assert resp["error"]["code"] == "CONFLICT"
    listed, _ = await thinker.request({"type": "list_reasoning_levels", "id": "l"})
    assert listed["data"]["active"] == "low"


@SHARED
async def test_set_reasoning_level_unknown_effort_is_not_found(thinker):
    """An effort the catalog does not have is NOT_FOUND.

    Covers: R9.2.36
    """
    resp, before = await thinker.request(
        {"type": "set_reasoning_level", "id": "s", "model": "test/thinker", "effort": "ultra"}
    )
    assert before == []
    assert resp["error"]["code"] == "NOT_FOUND"


@SHARED
async def test_reasoning_controls_refused_for_model_without_levels(agent):
    """Without reasoning-catalog/-switch advertised, the reasoning commands are refused.

    Covers: R9.2.31
    """
    assert agent.greeting is not None
    hello, _ = agent.greeting
    assert "reasoning-catalog" not in hello["capabilities"]
    resp, _ = await agent.request({"type": "list_reasoning_levels", "id": "l"})
    assert resp["success"] is False
    assert resp["error"]["code"] == "CONFLICT"


async def test_model_switch_to_reasoning_model_reports_capabilities(start):
    """model_changed carries the new model's capabilities, so controls can appear at once.

    Covers: R10.2.3
    """
    agent = await start([text_step("ok")], models=MODELS)
    await agent.handshake()
    _, before = await agent.request({"type": "set_model", "id": "s", "model": "test/thinker"})
    changed = before[0]
    assert changed["type"] == "model_changed"
    assert "reasoning-catalog" in changed["capabilities"]
    assert "reasoning-switch" in changed["capabilities"]
    _, before = await agent.request({"type": "set_model", "id": "s2", "model": "test/m"})
    assert "reasoning-catalog" not in before[0]["capabilities"]


async def test_reasoning_level_is_session_scoped(start, home):
    """A reasoning level set in a session is restored with that session.

    Covers: R9.2.41
    """
    agent = await start([text_step("ok"), text_step("ok")], "--model", "test/thinker", models=MODELS)
    _, sync = await agent.handshake()
    session_id = sync["session_id"]
    await agent.request({"type": "set_reasoning_level", "id": "s", "model": "test/thinker", "effort": "high"})
    await agent.send({"type": "prompt", "message": "go"})
    await agent.idle()
    assert await agent.finish() == 0
    again = await start(None, "--session", session_id)
    await again.handshake()
    resp, _ = await again.request({"type": "list_reasoning_levels", "id": "l"})
    assert resp["data"]["active"] == "high"
    fresh = await start(None, "--model", "test/thinker")
    await fresh.handshake()
    resp, _ = await fresh.request({"type": "list_reasoning_levels", "id": "l"})
    assert resp["data"]["active"] == "low", "another session keeps its own level"


async def test_list_modes_is_read_only(start, home):
    """list_modes changes nothing: no event, nothing written to the session, the mode stays.

    Covers: R9.2.15
    """
    agent = await start([text_step("ok")], "--mode", "plan")
    _, sync = await agent.handshake()
    for i in range(3):
        resp, before = await agent.request({"type": "list_modes", "id": f"l{i}"})
        assert before == []
        assert resp["data"]["active"] == "plan"
    assert not (home / "sessions" / sync["session_id"]).exists(), "nothing was recorded"

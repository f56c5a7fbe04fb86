"""Provider failures through the real turn loop: a ``shard agent --stdio`` process whose config.toml
points an ``openai``/``anthropic`` provider at the local test server (``[retry] base_delay = 0.01``).

Retries show as ``status`` events with a ``detail``; giving up, auth failures and cut streams are one
``error`` PROVIDER_ERROR with ``fatal: false`` and the agent takes the next prompt; usage carries cost
from the configured prices; the key never shows up anywhere but the request's auth header."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from shard.testing import AgentProcess, types

from ._server import Fail, ProviderServer, Stream
from ._support import (
    KEY,
    KEY_ENV,
    files_containing,
    of_type,
    provider_toml,
    server_home,
    session_entries,
    write_home,
)

OA_MODELS = (
    '[{ id = "m", context_window = 32768, input_price = 2.0, output_price = 8.0, cache_read_price = 0.5 }]'
)
ANTH_MODELS = (
    '[{ id = "claude-test", context_window = 200000, input_price = 3.0, output_price = 15.0, '
    "cache_read_price = 0.3, cache_write_price = 3.75 }]"
)
SERVER_ERROR = {
    "error": {"message": "The server had an error while processing your request.", "type": "server_error"}
}


@pytest.fixture
def home_for(tmp_path: Path, server: ProviderServer) -> Callable[[str], Path]:
    """Either kind with prices, so usage carries cost."""

    def _home(kind: str) -> Path:
        if kind == "openai":
            return server_home(tmp_path / "home", server, kind, models=OA_MODELS)
        home = tmp_path / "home"
        return server_home(home, server, kind, name="anth", model="claude-test", models=ANTH_MODELS)

    return _home


def _final_text(read: list[dict]) -> str:
    message = of_type(read, "message_complete")[-1]["message"]
    return "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")


async def test_429_then_success_shows_retry_status_and_completes(spawn, server):
    """A 429 (Retry-After: 0) then a good stream: a ``status`` with a detail mentioning 'retrying'
    and '429', then a status without detail before the first delta, then the turn completes with
    no error. The server saw exactly two requests.

    Covers: R9.1.19
    """
    server.replies.extend(
        [
            Fail(429, {"error": {"message": "Rate limit reached", "type": "requests"}}, {"retry-after": "0"}),
            Stream("openai/text.sse"),
        ]
    )
    agent = await spawn()
    await agent.send({"type": "prompt", "id": "p1", "message": "hello"})
    read = await agent.idle()
    assert "error" not in types(read)
    statuses = [(i, m) for i, m in enumerate(read) if m["type"] == "status"]
    detailed = [(i, m) for i, m in statuses if "detail" in m]
    assert len(detailed) == 1
    at, retry = detailed[0]
    assert retry["status"] == "streaming"
    assert "retrying" in retry["detail"]
    assert "429" in retry["detail"]
    cleared = [i for i, m in statuses if i > at and "detail" not in m]
    first_delta = types(read).index("message_delta")
    assert cleared
    assert cleared[0] < first_delta
    assert read[cleared[0]]["status"] == "streaming"
    assert _final_text(read) == "Hello, world!"
    assert "turn_end" in types(read)
    assert len(server.requests) == 2


async def test_a_closed_local_port_fails_after_one_short_retry(tmp_path, project):
    """Nothing listens on the provider's loopback port: with the default ``[retry]`` policy (five
    attempts for a remote host) the call is made twice — one ``retrying`` status naming the cause
    and "attempt 2 of 2", then a status without detail — and the turn fails with one error naming
    the URL nothing listens at. The agent is idle again and takes the next prompt."""
    with socket.socket() as s:  # a port with nothing behind it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    body = provider_toml("local", "openai", url, OA_MODELS)
    home = write_home(tmp_path / "home", body, default_model="local/m", retry="")  # the default policy
    agent = await AgentProcess.start(home, project, env={KEY_ENV: KEY})
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "hello"})
        read = await agent.idle()
    finally:
        await agent.kill()
    details = [m.get("detail") for m in of_type(read, "status") if m["status"] == "streaming"]
    retries = [d for d in details if d is not None]
    assert retries == ["retrying in 0.5 s: connection refused (attempt 2 of 2)"]
    assert details[-1] is None  # cleared before the error: no client is left showing a retry
    [error] = of_type(read, "error")
    assert error["message"] == (
        f"local: nothing is listening at {url}: is the server running? (gave up after 2 attempts)"
    )
    assert error["fatal"] is False


async def test_persistent_500_gives_up_with_one_nonfatal_error(spawn, server):
    """Three 500s with max_attempts = 3: exactly three requests, retry status details in between,
    then exactly one ``error`` PROVIDER_ERROR, fatal false, saying it gave up; the turn ends, the
    agent goes idle and answers the next prompt.

    Covers: R8.2, R8.17, R9.4.23, R9.4.25
    """
    server.replies.extend([Fail(500, SERVER_ERROR) for _ in range(3)])
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "hello"})
    read = await agent.idle()
    errors = of_type(read, "error")
    assert len(errors) == 1
    error = errors[0]
    assert set(error) == {"type", "code", "message", "fatal"}
    assert (error["code"], error["fatal"]) == ("PROVIDER_ERROR", False)
    assert "500" in error["message"]
    assert "gave up after 3 attempts" in error["message"]
    details = [m["detail"] for m in of_type(read, "status") if "detail" in m]
    assert len(details) == 2
    assert all("retrying" in d and "500" in d for d in details)
    assert "turn_end" in types(read)
    assert len(server.requests) == 3

    server.replies.append(Stream("openai/text.sse"))
    await agent.send({"type": "prompt", "id": "p2", "message": "again"})
    read2 = await agent.idle()
    assert read2[0] == {"type": "response", "id": "p2", "command": "prompt", "success": True}
    assert "error" not in types(read2)
    assert _final_text(read2) == "Hello, world!"
    assert len(server.requests) == 4


async def test_401_is_one_clear_error_naming_the_key_variable(spawn, server):
    """A 401 is not retried: one request, one ``error`` (fatal false) naming the api_key_env variable
    and not containing the key; no 'retrying' status.

    Covers: R8.17, R9.4.23, R9.4.25, R4.1.0.5
    """
    server.replies.append(
        Fail(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}})
    )
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "hello"})
    read = await agent.idle()
    errors = of_type(read, "error")
    assert len(errors) == 1
    assert (errors[0]["code"], errors[0]["fatal"]) == ("PROVIDER_ERROR", False)
    assert KEY_ENV in errors[0]["message"]
    assert "401" in errors[0]["message"]
    assert KEY not in errors[0]["message"]
    assert not [m for m in of_type(read, "status") if "detail" in m]
    assert len(server.requests) == 1


async def test_stream_cut_mid_message_keeps_partial_and_is_not_retried(spawn, server, tmp_path):
    """The connection drops after two text chunks: the partial text is in message_complete, with
    ``stop_reason: "failed"`` and the error in ``stop_detail`` (in the session entry too, which also
    carries "incomplete":"error"), one non-fatal PROVIDER_ERROR, no retry (the server saw exactly one
    request), and the next prompt works.

    Covers: R8.17, R9.4.23, R9.4.25
    """
    server.replies.append(Stream("openai/text.sse", cut_after=3))
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "hello"})
    read = await agent.idle()
    seq = [t for t in types(read) if t not in ("message_delta", "status")]
    assert seq == ["response", "turn_start", "message_complete", "message_complete", "error", "turn_end"]
    partial = of_type(read, "message_complete")[-1]
    assert partial["message"]["role"] == "assistant"
    assert partial["message"]["content"] == [{"type": "text", "text": "Hello, world"}]
    error = of_type(read, "error")[0]
    assert (error["code"], error["fatal"]) == ("PROVIDER_ERROR", False)
    assert len(server.requests) == 1
    entry = next(e for e in session_entries(tmp_path / "home") if e.get("id") == partial["message_id"])
    assert entry["incomplete"] == "error"
    assert entry["message"]["content"] == [{"type": "text", "text": "Hello, world"}]
    assert partial["message"]["stop_reason"] == entry["message"]["stop_reason"] == "failed"
    assert partial["message"]["stop_detail"] == entry["message"]["stop_detail"] == error["message"]

    server.replies.append(Stream("openai/text.sse"))
    await agent.send({"type": "prompt", "message": "again"})
    read2 = await agent.idle()
    assert _final_text(read2) == "Hello, world!"
    assert len(server.requests) == 2


async def test_usage_carries_cost_from_configured_prices(spawn, server):
    """An anthropic-kind provider with input/output/cache prices: the ``usage`` event after the call
    carries input, output, cache_read, cache_write, context_tokens, the model id, and the cost in
    dollars computed from the per-million prices; turn_end.usage totals it.

    Covers: R9.4.18, R11.0.18
    """
    server.replies.append(Stream("anthropic/cache_usage.sse"))
    agent = await spawn("anthropic")
    await agent.send({"type": "prompt", "message": "hello"})
    read = await agent.idle()
    usage = of_type(read, "usage")
    assert len(usage) == 1
    u = usage[0]
    expected_cost = (12 * 3.0 + 42 * 15.0 + 20000 * 0.3 + 1500 * 3.75) / 1_000_000  # = 0.012291
    assert {k: u[k] for k in ("input", "output", "cache_read", "cache_write", "context_tokens", "model")} == {
        "input": 12,
        "output": 42,
        "cache_read": 20000,
        "cache_write": 1500,
        "context_tokens": 12 + 20000 + 1500 + 42,
        "model": "anth/claude-test",
    }
    assert u["cost"] == pytest.approx(expected_cost, abs=1e-9)
    assert u["cost"] == pytest.approx(0.012291, abs=1e-9)
    assert types(read).index("usage") > types(read).index("message_complete")
    end = of_type(read, "turn_end")[0]
    assert end["usage"]["cost"] == pytest.approx(expected_cost, abs=1e-9)
    assert end["usage"]["input"] == 12


async def test_usage_cost_accumulates_over_provider_calls(spawn, server):
    """One usage event per provider call (tool call, then answer), each priced on its own tokens
    (openai: cached tokens at the cache_read price); turn_end sums the costs.

    Covers: R9.4.18
    """
    server.replies.extend([Stream("openai/tool_call.sse"), Stream("openai/cache_usage.sse")])
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "read the readme"})
    read = await agent.idle()
    usage = of_type(read, "usage")
    assert len(usage) == 2
    first = (402 * 2.0 + 17 * 8.0) / 1_000_000
    second = (86 * 2.0 + 300 * 8.0 + 1920 * 0.5) / 1_000_000
    assert usage[0]["cost"] == pytest.approx(first, abs=1e-9)
    assert usage[1]["cost"] == pytest.approx(second, abs=1e-9)
    assert (usage[1]["input"], usage[1]["cache_read"], usage[1]["context_tokens"]) == (86, 1920, 2306)
    assert of_type(read, "turn_end")[0]["usage"]["cost"] == pytest.approx(first + second, abs=1e-9)


async def test_api_key_never_leaks_into_events_stderr_or_home(spawn, server, tmp_path):
    """After list_models, a tool-using turn, a 401 and a cut stream, the key value appears in no event
    on stdout, not in stderr, and in no file under SHARD_HOME — while the server did receive it in
    the Authorization header (so the search is not vacuous).

    Covers: R4.1.0.5, R9.2.23
    """
    server.replies.extend(
        [
            Stream("openai/tool_call.sse"),
            Stream("openai/answer.sse"),
            Fail(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}}),
            Stream("openai/text.sse", cut_after=2),
        ]
    )
    agent = await spawn()
    response, _ = await agent.request({"type": "list_models", "id": "lm"})
    assert response["success"] is True
    assert "local/m" in [m["id"] for m in response["data"]["models"]]
    for prompt in ("read the readme", "again", "once more"):
        await agent.send({"type": "prompt", "message": prompt})
        await agent.idle()
    assert types(agent.seen).count("error") == 2
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    stdout_text = "\n".join(map(str, agent.seen))
    assert KEY not in stdout_text
    assert await agent.finish() == 0
    assert KEY not in await agent.stderr_text()
    home = tmp_path / "home"
    assert list(home.rglob("session.jsonl"))
    assert files_containing(home, KEY) == []


async def test_unset_key_variable_is_reported_when_a_prompt_needs_it(home_for, project, server):
    """The default model's api_key_env is not set: the agent still starts, and a prompt ends in one
    non-fatal PROVIDER_ERROR naming the variable — without contacting the server.

    Covers: R8.17, R9.4.25
    """
    agent = await AgentProcess.start(home_for("openai"), project)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "hello"})
        read = await agent.idle()
        errors = of_type(read, "error")
        assert len(errors) == 1
        assert (errors[0]["code"], errors[0]["fatal"]) == ("PROVIDER_ERROR", False)
        assert KEY_ENV in errors[0]["message"]
        assert "turn_end" in types(read)
        assert server.requests == []
    finally:
        await agent.kill()

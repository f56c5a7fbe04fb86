"""The ``anthropic`` provider through the official SDK against a local server replaying recorded
Messages-API SSE transcripts: the normalized events it yields, the request bodies it sends, and how
HTTP and stream failures become ProviderErrors."""

from __future__ import annotations

import warnings
from pathlib import Path

import orjson
import pytest

from shard.agent.assembler import MessageAssembler
from shard.agent.catalog import ANTHROPIC_MODELS, ModelCatalog, ModelEntry
from shard.agent.config.settings import RetryConfig, load_config
from shard.agent.providers.anthropic import AnthropicProvider
from shard.agent.providers.base import (
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    ToolSpec,
    UsageReport,
)
from shard.agent.providers.retry import stream_with_retries
from shard.protocol.content import (
    ErrorContent,
    ImageBlock,
    JsonContent,
    Message,
    TextBlock,
    TextContent,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from shard.protocol.errors import ErrorCode, ShardError

from ._server import Fail, ProviderServer, Raw, Stream
from ._support import (
    KEY,
    KEY_ENV,
    SYSTEM,
    close_client,
    collect,
    entry_from_config,
    provider_toml,
    request,
    user,
    without_empty_args,
)

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds3Q8yHkPz0cGv7S0bQmKqzRsL3Cw"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
MODELS = (
    '[{ id = "claude-test", context_window = 200000, max_output_tokens = 8192, '
    'default_reasoning = "off", reasoning_levels = ['
    '{ id = "off", label = "Off", budget_tokens = 0 }, '
    '{ id = "deep", label = "Deep", description = "Think hard", budget_tokens = 10000 }] }]'
)


@pytest.fixture
def entry(tmp_path: Path, server: ProviderServer, monkeypatch: pytest.MonkeyPatch) -> ModelEntry:
    monkeypatch.setenv(KEY_ENV, KEY)
    body = provider_toml("anth", "anthropic", server.anthropic_url, MODELS)
    return entry_from_config(tmp_path / "home", body, "anth/claude-test")


async def _stream(server: ProviderServer, entry: ModelEntry, reply: Stream | Fail | Raw, **kw):
    server.replies.append(reply)
    return await collect(AnthropicProvider(entry), request("claude-test", **kw))


async def test_plain_text_stream(server, entry):
    """message_start → text deltas (with a ping between) → message_delta → message_stop fold into
    text deltas, one usage report and the stop, in order."""
    events, error = await _stream(server, entry, Stream("anthropic/text.sse"))
    assert error is None
    assert events == [
        TextDelta("Hello"),
        TextDelta(", world"),
        TextDelta("!"),
        UsageReport(input=25, output=12, cache_read=0, cache_write=0, context_tokens=37),
        Stop("end_turn"),
    ]
    assert [r.path for r in server.requests] == ["/v1/messages"]
    auth = server.requests[0].headers
    assert KEY in (auth.get("x-api-key", ""), auth.get("Authorization", "").removeprefix("Bearer "))


async def test_a_reply_cut_at_max_tokens_names_the_limit(server, entry):
    """stop_reason max_tokens becomes Stop('max_tokens') carrying the max_tokens the request asked
    for (the model's max_output_tokens), so the turn can say where the reply was cut."""
    events, error = await _stream(server, entry, Stream("anthropic/max_tokens.sse"))
    assert error is None
    assert server.requests[0].body["max_tokens"] == 8192
    assert events == [
        TextDelta("Step 1: open the"),
        UsageReport(input=120, output=16384, cache_read=0, cache_write=0, context_tokens=16504),
        Stop("max_tokens", output_limit=8192),
    ]


async def test_thinking_keeps_its_signature(server, entry):
    """thinking_delta text arrives as ThinkingDelta; the signature_delta arrives as a ThinkingDelta
    carrying the signature (no text), before the text block."""
    events, error = await _stream(server, entry, Stream("anthropic/thinking.sse"))
    assert error is None
    assert events == [
        ThinkingDelta("The user asks for 2 + 2."),
        ThinkingDelta(" That is 4."),
        ThinkingDelta("", signature=SIGNATURE),
        TextDelta("2 + 2 = 4."),
        UsageReport(input=40, output=31, cache_read=0, cache_write=0, context_tokens=71),
        Stop("end_turn"),
    ]


async def test_one_tool_call(server, entry):
    """A tool_use block starts a call with the API's id and name; input_json_delta fragments are
    tagged with that call; stop_reason tool_use becomes Stop('tool_use')."""
    events, error = await _stream(server, entry, Stream("anthropic/tool_use.sse"))
    assert error is None
    call = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert without_empty_args(events) == [
        TextDelta("I'll read the file."),
        ToolCallStart(id=call, name="read"),
        ToolCallArgs('{"path": "READ', call_id=call),
        ToolCallArgs('ME.md"}', call_id=call),
        UsageReport(input=472, output=61, cache_read=0, cache_write=0, context_tokens=533),
        Stop("tool_use"),
    ]


async def test_two_tool_calls_in_one_message(server, entry):
    """Two tool_use blocks: each fragment names its own call, and the turn loop's assembler
    rebuilds both argument objects."""
    events, error = await _stream(server, entry, Stream("anthropic/parallel_tools.sse"))
    assert error is None
    a, b = "toolu_01A09q90qw90lq917835lq9", "toolu_01B7xk2mP4vZ8nQe"
    assert without_empty_args(events)[:5] == [
        ToolCallStart(id=a, name="read"),
        ToolCallArgs('{"path": "a.txt"}', call_id=a),
        ToolCallStart(id=b, name="ls"),
        ToolCallArgs('{"path": ', call_id=b),
        ToolCallArgs('"src"}', call_id=b),
    ]
    assert events[-1] == Stop("tool_use")
    assembler = MessageAssembler("msg-x")
    for event in events:
        assembler.feed(event)
    assert [(c.id, c.name, c.args) for c in assembler.tool_calls()] == [
        (a, "read", {"path": "a.txt"}),
        (b, "ls", {"path": "src"}),
    ]


async def test_usage_with_cache_read_and_write(server, entry):
    """cache_read_input_tokens and cache_creation_input_tokens are reported separately from
    input_tokens; context_tokens counts all of them plus the output."""
    events, error = await _stream(server, entry, Stream("anthropic/cache_usage.sse"))
    assert error is None
    assert events[-2:] == [
        UsageReport(input=12, output=42, cache_read=20000, cache_write=1500, context_tokens=21554),
        Stop("end_turn"),
    ]


async def test_request_body_messages_cache_and_tools(server, entry):
    """What the API receives: the system prompt as a text block with cache_control; consecutive
    same-role messages merged with tool_result blocks first in the user turn; a signed thinking
    block sent back with its signature and an unsigned one dropped; images as base64 image blocks;
    tools as name/description/input_schema; cache_control on the last block of the last message
    only; no thinking parameter at the 'off' level."""
    messages = [
        Message(
            id="m1",
            role="user",
            content=[TextBlock(text="What is in this picture?"), ImageBlock(data=PNG, mime_type="image/png")],
        ),
        Message(
            id="m2",
            role="assistant",
            content=[
                ThinkingBlock(text="Let me look.", signature=SIGNATURE),
                TextBlock(text="I'll read the notes."),
                ToolCallBlock(id="toolu_1", name="read", args={"path": "notes.txt"}),
                ToolCallBlock(id="toolu_2", name="bash", args={"command": "date"}),
            ],
        ),
        Message(id="m3", role="user", content=[TextBlock(text="Also check the date.")]),
        Message(
            id="m4",
            role="user",
            content=[ToolResultBlock(tool_call_id="toolu_1", content=TextContent(text="buy milk"))],
        ),
        Message(
            id="m5",
            role="user",
            content=[
                ToolResultBlock(
                    tool_call_id="toolu_2", content=ErrorContent(message="date: not found"), is_error=True
                )
            ],
        ),
        Message(
            id="m6",
            role="assistant",
            content=[
                ThinkingBlock(text="an unsigned thought from another provider"),
                TextBlock(text="The notes say: buy milk."),
            ],
        ),
        Message(id="m7", role="user", content=[TextBlock(text="Thanks. Summarise.")]),
    ]
    tools = [
        ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
        ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {"type": "string"}}}),
    ]
    _, error = await _stream(
        server, entry, Stream("anthropic/text.sse"), messages=messages, tools=tools, reasoning="off"
    )
    assert error is None
    body = server.requests[0].body
    assert body["model"] == "claude-test"
    assert body["stream"] is True
    assert body["max_tokens"] == 8192
    assert "thinking" not in body
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert body["tools"] == [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Let me look.", "signature": SIGNATURE},
                {"type": "text", "text": "I'll read the notes."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "notes.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"command": "date"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "buy milk"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "date: not found",
                    "is_error": True,
                },
                {"type": "text", "text": "Also check the date."},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "The notes say: buy milk."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Thanks. Summarise.", "cache_control": {"type": "ephemeral"}}
            ],
        },
    ]


async def test_json_tool_result_is_sent_as_json_text(server, entry):
    """A tool result holding JSON reaches the API as its JSON text inside the tool_result block."""
    messages = [
        user("list it", "m1"),
        Message(id="m2", role="assistant", content=[ToolCallBlock(id="toolu_9", name="ls", args={})]),
        Message(
            id="m3",
            role="user",
            content=[ToolResultBlock(tool_call_id="toolu_9", content=JsonContent(value={"files": ["a"]}))],
        ),
    ]
    _, error = await _stream(server, entry, Stream("anthropic/text.sse"), messages=messages)
    assert error is None
    last = server.requests[0].body["messages"][-1]
    assert last == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_9",
                "content": '{"files":["a"]}',
                "cache_control": {"type": "ephemeral"},
            }
        ],
    }


async def test_streamed_thinking_goes_back_signed_in_the_next_request(server, entry):
    """Round trip: thinking streamed with a signature, assembled by the turn loop's assembler into
    the assistant message, is sent back in the next request with that exact signature."""
    server.replies.extend([Stream("anthropic/thinking.sse"), Stream("anthropic/text.sse")])
    provider = AnthropicProvider(entry)
    assembler = MessageAssembler("msg-a")
    try:
        async for event in provider.stream(request("claude-test", [user("2+2?", "m1")])):
            assembler.feed(event)
        history = [user("2+2?", "m1"), assembler.message(), user("and 3+3?", "m3")]
        async for _ in provider.stream(request("claude-test", history)):
            pass
    finally:
        await close_client(provider)
    sent = server.requests[1].body["messages"][1]
    assert sent == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "The user asks for 2 + 2. That is 4.", "signature": SIGNATURE},
            {"type": "text", "text": "2 + 2 = 4."},
        ],
    }


async def test_reasoning_level_sets_the_thinking_budget(server, entry):
    """A level with budget_tokens sends thinking {type: enabled, budget_tokens}, and max_tokens is
    raised above the budget (the API rejects max_tokens <= budget_tokens)."""
    _, error = await _stream(server, entry, Stream("anthropic/text.sse"), reasoning="deep")
    assert error is None
    body = server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10000}
    assert body["max_tokens"] > 10000


async def test_429_is_retryable_with_retry_after(server, entry):
    """HTTP 429 with Retry-After: a retryable ProviderError carrying the server's delay."""
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"}}
    events, error = await _stream(server, entry, Fail(429, body, {"retry-after": "7"}))
    assert events == []
    assert error is not None
    assert error.code is ErrorCode.PROVIDER_ERROR
    assert (error.retryable, error.status, error.retry_after) == (True, 429, 7.0)
    assert "Number of requests exceeded" in error.message


async def test_529_overloaded_is_retryable(server, entry):
    """HTTP 529 (Anthropic's 'overloaded') is retryable."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    _, error = await _stream(server, entry, Fail(529, body))
    assert error is not None
    assert (error.retryable, error.status) == (True, 529)


async def test_overloaded_error_event_mid_stream_is_retryable(server, entry):
    """An ``event: error`` with overloaded_error arriving on a 200 stream before any content: the
    Messages API documents it as the streaming form of HTTP 529, so the call is retryable (nothing
    was shown yet) and the message says it was overloaded — not 'HTTP 200'."""
    events, error = await _stream(server, entry, Stream("anthropic/overloaded.sse"))
    assert events == []
    assert error is not None
    assert error.retryable is True
    assert "overloaded" in error.message.lower()
    assert "HTTP 200" not in error.message


async def test_context_overflow_is_flagged_not_retried(server, entry):
    """HTTP 400 'prompt is too long' is marked context_overflow and is not retryable."""
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 210412 tokens > 200000"},
    }
    _, error = await _stream(server, entry, Fail(400, body))
    assert error is not None
    assert (error.context_overflow, error.retryable, error.status) == (True, False, 400)


async def test_401_names_the_key_variable_and_never_the_key(server, entry):
    """HTTP 401: not retryable; the message names the variable that holds the key and the provider,
    and never contains the key.

    Covers: R4.1.0.5
    """
    body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    _, error = await _stream(server, entry, Fail(401, body))
    assert error is not None
    assert (error.retryable, error.status) == (False, 401)
    assert KEY_ENV in error.message
    assert "anth" in error.message
    assert KEY not in error.message


async def test_server_error_text_echoing_the_key_is_scrubbed(server, entry):
    """A server (or proxy) that echoes the key in its error text (401 or 5xx) must not get the key
    into the ProviderError message, which goes to clients and the session.

    Covers: R4.1.0.5
    """
    body = {"type": "error", "error": {"type": "authentication_error", "message": f"invalid key {KEY}"}}
    _, error = await _stream(server, entry, Fail(401, body))
    assert error is not None
    assert KEY not in error.message
    body500 = {"type": "error", "error": {"type": "api_error", "message": f"upstream rejected {KEY}"}}
    _, error = await _stream(server, entry, Fail(500, body500))
    assert error is not None
    assert KEY not in error.message


async def test_stream_cut_mid_message_keeps_the_partial_and_is_not_retried(server, entry):
    """The connection drops after the first text delta: the delta was delivered, the call fails with
    a retryable ProviderError, and the retry wrapper does not replay it (one request only)."""
    server.replies.extend([Stream("anthropic/text.sse", cut_after=4), Stream("anthropic/text.sse")])
    provider = AnthropicProvider(entry)
    events = []
    retries: list[str | None] = []
    policy = RetryConfig(max_attempts=5, base_delay=0.0, max_delay=0.0)

    async def drain() -> None:
        try:
            async for event in stream_with_retries(provider, request("claude-test"), policy, retries.append):
                events.append(event)
        finally:
            await close_client(provider)

    with pytest.raises(ShardError) as info:
        await drain()
    assert events == [TextDelta("Hello")]
    assert info.value.code is ErrorCode.PROVIDER_ERROR
    assert "connection lost" in info.value.message
    assert retries == []
    assert len(server.requests) == 1


async def test_stream_ending_without_message_stop_is_a_failure(server, entry):
    """A response that ends cleanly but never sent message_stop is incomplete: the text that came is
    delivered, then the call fails (retryable) instead of reporting a normal stop."""
    events, error = await _stream(server, entry, Stream("anthropic/text.sse", events=5))
    assert events == [TextDelta("Hello"), TextDelta(", world")]
    assert error is not None
    assert error.retryable is True
    assert not any(isinstance(e, Stop) for e in events)


async def test_missing_key_variable_is_not_found_naming_it(tmp_path, server):
    """Building the provider with its key variable unset fails with NOT_FOUND naming the variable
    (no network traffic)."""
    body = provider_toml("anth", "anthropic", server.anthropic_url, MODELS)
    entry = entry_from_config(tmp_path / "home", body, "anth/claude-test")
    with pytest.raises(ShardError) as info:
        AnthropicProvider(entry)
    assert info.value.code is ErrorCode.NOT_FOUND
    assert KEY_ENV in info.value.message
    assert server.requests == []


async def test_builtin_provider_401_names_anthropic_api_key(tmp_path, server, monkeypatch):
    """The built-in provider (from ANTHROPIC_API_KEY, with ANTHROPIC_BASE_URL pointing at the test
    server) sends its request there; a 401 names ANTHROPIC_API_KEY and not the key.

    Covers: R4.1.0.5
    """
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
    (tmp_path / "home").mkdir()
    builtin = ModelCatalog(load_config(tmp_path / "home")).resolve("anthropic/claude-haiku-5-5")
    assert builtin is not None
    body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    server.replies.append(Fail(401, body))
    _, error = await collect(AnthropicProvider(builtin), request("claude-haiku-4-5"))
    assert [r.path for r in server.requests] == ["/v1/messages"]
    assert error is not None
    assert "ANTHROPIC_API_KEY" in error.message
    assert KEY not in error.message


@pytest.mark.parametrize("model", [m.id for m in ANTHROPIC_MODELS])
async def test_builtin_models_are_not_deprecated_by_the_sdk(tmp_path, server, monkeypatch, model):
    """Every curated built-in anthropic model streams through the installed SDK without the SDK
    warning that the model is deprecated / near end-of-life (the default model in particular must
    not be one that is about to stop working)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
    (tmp_path / "home").mkdir()
    builtin = ModelCatalog(load_config(tmp_path / "home")).resolve(f"anthropic/{model}")
    assert builtin is not None
    server.replies.append(Stream("anthropic/text.sse"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, error = await collect(AnthropicProvider(builtin), request(model))
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == []
    assert error is None


async def test_a_whole_json_message_is_folded_as_its_stream(server, entry):
    """A ``200 application/json`` answer to the streaming request (as llama.cpp's server sends) is
    the reply: its thinking with the signature, text and tool_use come as the stream would bring
    them, then its usage and stop — one call, no error. (Made from the recorded llama-server reply,
    ``fixtures/llama-cpp/anthropic-json-reply.json``, with the blocks a stream may carry.)"""
    message = {
        "id": "chatcmpl-4PKCsSruaXPCucr4ipEPALWoDwfXk93o",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "The README says.", "signature": SIGNATURE},
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "README.md"}},
        ],
        "model": "smollm2",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"cache_read_input_tokens": 21, "input_tokens": 12, "output_tokens": 20},
    }
    body = orjson.dumps(message)
    events, error = await _stream(server, entry, Raw(200, "application/json; charset=utf-8", body))
    assert error is None
    assert events == [
        ThinkingDelta("The README says."),
        ThinkingDelta("", signature=SIGNATURE),
        TextDelta("Reading it."),
        ToolCallStart(id="toolu_1", name="read"),
        ToolCallArgs('{"path":"README.md"}', call_id="toolu_1"),
        UsageReport(input=12, output=20, cache_read=21, context_tokens=53),
        Stop("tool_use"),
    ]
    assert len(server.requests) == 1

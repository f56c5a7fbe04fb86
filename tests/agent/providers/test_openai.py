"""The ``openai`` provider (Chat Completions) through the official SDK against a local server replaying
recorded ``chat.completion.chunk`` SSE transcripts — from OpenAI itself and from OpenAI-compatible
servers (DeepSeek, vLLM, bare-bones local servers) — plus the request bodies it sends and its
failures."""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

import pytest

from shard.agent.assembler import MessageAssembler
from shard.agent.catalog import ModelEntry
from shard.agent.providers.base import (
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    ToolSpec,
    UsageReport,
)
from shard.agent.providers.openai import OpenAIProvider
from shard.protocol.content import (
    ErrorContent,
    ImageBlock,
    Message,
    TextBlock,
    TextContent,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from shard.protocol.errors import ErrorCode, ShardError

from ._server import Fail, Json, ProviderServer, Raw, Stream, recorded
from ._support import KEY, KEY_ENV, SYSTEM, collect, entry_from_config, provider_toml, request, user

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
MODELS = (
    '[{ id = "gpt-test", context_window = 128000, max_output_tokens = 4096, default_reasoning = "quick", '
    'reasoning_levels = [{ id = "quick", label = "Quick", effort = "low" }, '
    '{ id = "thorough", label = "Thorough", effort = "high" }, "medium"] }, '
    '{ id = "plain", context_window = 32768 }]'
)


@pytest.fixture
def entry(tmp_path: Path, server: ProviderServer, monkeypatch: pytest.MonkeyPatch) -> ModelEntry:
    monkeypatch.setenv(KEY_ENV, KEY)
    body = provider_toml("local", "openai", server.openai_url, MODELS)
    return entry_from_config(tmp_path / "home", body, "local/gpt-test")


async def _stream(server: ProviderServer, entry: ModelEntry, reply: Stream | Fail | Json | Raw, **kw):
    server.replies.append(reply)
    return await collect(OpenAIProvider(entry), request(entry.model.id, **kw))


async def test_plain_text_stream(server, entry):
    """Content deltas become text deltas; the usage chunk (empty choices, include_usage) becomes one
    usage report; finish_reason 'stop' becomes Stop('end_turn'), after the usage."""
    events, error = await _stream(server, entry, Stream("openai/text.sse"))
    assert error is None
    assert events == [
        TextDelta("Hello"),
        TextDelta(", world"),
        TextDelta("!"),
        UsageReport(input=19, output=10, cache_read=0, context_tokens=29),
        Stop("end_turn"),
    ]
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]
    assert server.requests[0].headers.get("Authorization") == f"Bearer {KEY}"


async def test_one_tool_call(server, entry):
    """The first tool-call delta (index, id, name) starts the call; argument fragments follow tagged
    with its id; finish_reason tool_calls becomes Stop('tool_use')."""
    events, error = await _stream(server, entry, Stream("openai/tool_call.sse"))
    assert error is None
    call = "call_DdmO9pD3xa9XTPNJ32zg2hcA"
    assert events == [
        ToolCallStart(id=call, name="read"),
        *[ToolCallArgs(f, call_id=call) for f in ['{"', "path", '":"', "README.md", '"}']],
        UsageReport(input=402, output=17, cache_read=0, context_tokens=419),
        Stop("tool_use"),
    ]


async def test_parallel_tool_calls_with_interleaved_fragments(server, entry):
    """Two calls whose argument fragments interleave by index: every fragment is tagged with the
    call its index belongs to, so the turn loop's assembler rebuilds both argument objects."""
    events, error = await _stream(server, entry, Stream("openai/parallel_tools.sse"))
    assert error is None
    a, b = "call_A1xq7Lr2", "call_B9kz3Wm4"
    assert events == [
        ToolCallStart(id=a, name="read"),
        ToolCallStart(id=b, name="ls"),
        ToolCallArgs('{"path": ', call_id=a),
        ToolCallArgs('{"path": ', call_id=b),
        ToolCallArgs('"a.txt"}', call_id=a),
        ToolCallArgs('"src"}', call_id=b),
        UsageReport(input=530, output=44, context_tokens=574),
        Stop("tool_use"),
    ]
    assembler = MessageAssembler("msg-x")
    for event in events:
        assembler.feed(event)
    assert [(c.id, c.name, c.args, c.args_error) for c in assembler.tool_calls()] == [
        (a, "read", {"path": "a.txt"}, None),
        (b, "ls", {"path": "src"}, None),
    ]


async def test_usage_with_cached_prompt_tokens(server, entry):
    """prompt_tokens_details.cached_tokens is reported as cache_read and taken out of input;
    context_tokens is prompt + completion."""
    events, error = await _stream(server, entry, Stream("openai/cache_usage.sse"))
    assert error is None
    assert events[-2:] == [
        UsageReport(input=2006 - 1920, output=300, cache_read=1920, context_tokens=2306),
        Stop("end_turn"),
    ]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (
            "openai/reasoning_content.sse",
            [
                ThinkingDelta("The user asks for 2 + 2."),
                ThinkingDelta(" That is 4."),
                TextDelta("2 + 2 = 4."),
                UsageReport(input=13, output=50, cache_read=0, context_tokens=63),
                Stop("end_turn"),
            ],
        ),
        (
            "openai/reasoning_vllm.sse",
            [
                ThinkingDelta("Short thought."),
                TextDelta("Done."),
                UsageReport(input=20, output=6, context_tokens=26),
                Stop("end_turn"),
            ],
        ),
    ],
    ids=["deepseek-reasoning_content", "vllm-reasoning"],
)
async def test_reasoning_text_from_compatible_servers(server, entry, fixture, expected):
    """DeepSeek's ``reasoning_content`` and vLLM's ``reasoning`` delta fields become thinking deltas
    (no signature: Chat Completions has none)."""
    events, error = await _stream(server, entry, Stream(fixture))
    assert error is None
    assert events == expected


async def test_bare_server_text_without_optional_fields(server, entry):
    """A server that sends no id/model/role, no choice index, no finish_reason and no usage chunk:
    the text still arrives, there is no usage report, and the stop is inferred as end_turn."""
    events, error = await _stream(server, entry, Stream("openai/minimal_text.sse"))
    assert error is None
    assert events == [TextDelta("Bare"), TextDelta(" bones."), Stop("end_turn")]


async def test_bare_server_tool_calls_without_id_or_index(server, entry):
    """Tool-call deltas with neither ``id`` nor ``index``: each named delta starts a new call with a
    made-up ``tc-`` id, unnamed fragments continue the last call, and with no finish_reason the stop
    is inferred as tool_use. The assembler rebuilds both calls."""
    events, error = await _stream(server, entry, Stream("openai/minimal_tools.sse"))
    assert error is None
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["read", "ls"]
    first, second = (s.id for s in starts)
    assert first.startswith("tc-")
    assert second.startswith("tc-")
    assert first != second
    assert events == [
        ToolCallStart(id=first, name="read"),
        ToolCallArgs('{"path":', call_id=first),
        ToolCallArgs(' "a.txt"}', call_id=first),
        ToolCallStart(id=second, name="ls"),
        ToolCallArgs("{}", call_id=second),
        Stop("tool_use"),
    ]
    assembler = MessageAssembler("msg-x")
    for event in events:
        assembler.feed(event)
    assert [(c.name, c.args) for c in assembler.tool_calls()] == [("read", {"path": "a.txt"}), ("ls", {})]


async def test_request_body(server, entry):
    """What the server receives: the system message first; user text as a string and user text with
    an image as parts with an image_url data URL; assistant text with tool_calls whose arguments are
    JSON strings; tool results as role 'tool' messages (errors prefixed); thinking not sent back;
    tools as functions; stream with stream_options.include_usage; reasoning_effort from the level's
    effort; max_completion_tokens from the model."""
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
                ThinkingBlock(text="hidden reasoning", signature="sig"),
                TextBlock(text="Reading two files."),
                ToolCallBlock(id="call_1", name="read", args={"path": "a.txt"}),
                ToolCallBlock(id="call_2", name="read", args={"path": "b.txt", "limit": 5}),
            ],
        ),
        Message(
            id="m3",
            role="user",
            content=[ToolResultBlock(tool_call_id="call_1", content=TextContent(text="alpha"))],
        ),
        Message(
            id="m4",
            role="user",
            content=[
                ToolResultBlock(
                    tool_call_id="call_2", content=ErrorContent(message="no such file"), is_error=True
                )
            ],
        ),
        user("Now summarise.", "m5"),
    ]
    tools = [ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})]
    _, error = await _stream(
        server, entry, Stream("openai/text.sse"), messages=messages, tools=tools, reasoning="thorough"
    )
    assert error is None
    body = server.requests[0].body
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "high"
    assert body["max_completion_tokens"] == 4096
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read", "description": "Read a file", "parameters": tools[0].parameters},
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Reading two files.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"b.txt","limit":5}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
        {"role": "user", "content": "Now summarise."},
    ]


@pytest.mark.parametrize(("level", "effort"), [("quick", "low"), ("thorough", "high"), ("medium", "medium")])
async def test_reasoning_effort_follows_the_level(server, entry, level, effort):
    """reasoning_effort is the level's ``effort`` when configured, else the level id."""
    _, error = await _stream(server, entry, Stream("openai/text.sse"), reasoning=level)
    assert error is None
    assert server.requests[0].body["reasoning_effort"] == effort


async def test_model_without_levels_sends_no_reasoning_effort(tmp_path, server, monkeypatch):
    """A model with no reasoning levels never sends reasoning_effort (many servers reject it)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    plain = entry_from_config(
        tmp_path / "home", provider_toml("local", "openai", server.openai_url, MODELS), "local/plain"
    )
    _, error = await _stream(server, plain, Stream("openai/text.sse"), reasoning="high")
    assert error is None
    assert "reasoning_effort" not in server.requests[0].body
    assert "max_completion_tokens" not in server.requests[0].body


async def test_local_server_without_key_variable(tmp_path, server):
    """A provider with no api_key_env (a local server) works without any key variable set."""
    body = provider_toml("ollama", "openai", server.openai_url, MODELS, key_env=None)
    local = entry_from_config(tmp_path / "home", body, "ollama/plain")
    events, error = await _stream(server, local, Stream("openai/text.sse"))
    assert error is None
    assert events[-1] == Stop("end_turn")


async def test_429_with_retry_after_ms(server, entry):
    """HTTP 429 with retry-after-ms: retryable, and the delay is read in seconds."""
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    _, error = await _stream(server, entry, Fail(429, body, {"retry-after-ms": "1500"}))
    assert error is not None
    assert error.code is ErrorCode.PROVIDER_ERROR
    assert (error.retryable, error.status, error.retry_after) == (True, 429, 1.5)


async def test_500_is_retryable_and_400_is_not(server, entry):
    """5xx is retryable; a plain 400 is not (retrying would fail the same way)."""
    _, error = await _stream(server, entry, Fail(503, {"error": {"message": "unavailable"}}))
    assert error is not None
    assert (error.retryable, error.status) == (True, 503)
    _, error = await _stream(server, entry, Fail(400, {"error": {"message": "bad tool schema"}}))
    assert error is not None
    assert (error.retryable, error.status, error.context_overflow) == (False, 400, False)
    assert "bad tool schema" in error.message


async def test_context_length_exceeded_is_flagged(server, entry):
    """HTTP 400 context_length_exceeded is marked as a context overflow."""
    body = {
        "error": {
            "message": "This model's maximum context length is 128000 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    _, error = await _stream(server, entry, Fail(400, body))
    assert error is not None
    assert error.context_overflow is True


async def test_401_names_the_key_variable_and_never_the_key(server, entry):
    """HTTP 401: not retryable, names the provider and its api_key_env, never the key.

    Covers: R4.1.0.5
    """
    body = {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}}
    _, error = await _stream(server, entry, Fail(401, body))
    assert error is not None
    assert (error.retryable, error.status) == (False, 401)
    assert KEY_ENV in error.message
    assert "local" in error.message
    assert KEY not in error.message


async def test_server_error_text_echoing_the_key_is_scrubbed(server, entry):
    """A compatible server (or proxy) that echoes the key in its 401 or 5xx error text must not get
    the key into the ProviderError message.

    Covers: R4.1.0.5
    """
    _, error = await _stream(
        server, entry, Fail(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    )
    assert error is not None
    assert KEY not in error.message
    _, error = await _stream(server, entry, Fail(502, {"error": {"message": f"bad gateway for {KEY}"}}))
    assert error is not None
    assert KEY not in error.message


async def test_stream_cut_mid_message(server, entry):
    """The connection drops after two content chunks: both deltas were delivered, then a retryable
    'connection lost' ProviderError, with no Stop."""
    events, error = await _stream(server, entry, Stream("openai/text.sse", cut_after=3))
    assert events == [TextDelta("Hello"), TextDelta(", world")]
    assert error is not None
    assert error.retryable is True
    assert "connection lost" in error.message


async def test_empty_response_is_a_retryable_failure(server, entry):
    """A 200 stream with nothing but [DONE] is an empty response: retryable failure, not a silent
    empty message."""
    events, error = await _stream(server, entry, Stream("data: [DONE]\n\n"))
    assert events == []
    assert error is not None
    assert error.retryable is True
    assert error.message == (
        "local: the model returned an empty reply: a stream (text/event-stream) with no chunks"
    )


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        (
            Stream("openai/empty_reply.sse"),
            "a stream (text/event-stream) of 2 chunks with finish_reason 'stop' and no usage",
        ),
        (
            Json({"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}}]}),
            "a chat.completion (application/json) with an empty message, no finish_reason and no usage",
        ),
    ],
    ids=["stream", "json"],
)
async def test_a_reply_with_no_content_and_no_usage_is_an_error_naming_it(server, entry, reply, cause):
    """A 200 reply that carries a role and a finish_reason but no text, no tool call and no usage
    (a local server's failed generation) is a retryable ProviderError saying what came instead —
    not a Stop that the turn would record as a successful empty assistant message."""
    events, error = await _stream(server, entry, reply)
    assert events == []
    assert error is not None
    assert error.code is ErrorCode.PROVIDER_ERROR
    assert error.retryable is True
    assert error.message == f"local: the model returned an empty reply: {cause}"


LLAMA_CALL = "Xq3vN8pL2mR7tY1wK5sD9fH4jB6cZ0aE"


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (
            "openai/llama_server_text.json",
            [
                ThinkingDelta("The README names the code."),
                TextDelta("The launch code is 7-4-1."),
                UsageReport(input=28, output=14, cache_read=384, context_tokens=426),
                Stop("end_turn"),
            ],
        ),
        (
            "openai/llama_server_tool_call.json",
            [
                ToolCallStart(id=LLAMA_CALL, name="read"),
                ToolCallArgs('{"path":"README.md"}', call_id=LLAMA_CALL),
                UsageReport(input=398, output=21, cache_read=0, context_tokens=419),
                Stop("tool_use"),
            ],
        ),
        (
            "openai/litellm_text.json",
            [
                TextDelta("Hello from the proxy."),
                UsageReport(input=31, output=5, context_tokens=36),
                Stop("end_turn"),
            ],
        ),
        (
            "openai/llama_server_length.json",
            [
                TextDelta("Step 1: open the"),
                UsageReport(input=120, output=4096, cache_read=0, context_tokens=4216),
                Stop("max_tokens", output_limit=4096),
            ],
        ),
    ],
    ids=["llama-server-text", "llama-server-tool-call", "litellm", "llama-server-length"],
)
async def test_a_whole_json_completion_answering_a_stream_is_the_reply(server, entry, fixture, expected):
    """A server that answers the streaming request with ``200 application/json`` and a whole
    ``chat.completion`` (llama.cpp's llama-server, a LiteLLM proxy): its message is the reply —
    reasoning_content, text, tool calls with their whole arguments, usage (cached tokens split
    out), finish_reason — from the one request, with no retry and no error."""
    events, error = await _stream(server, entry, Json(fixture))
    assert error is None
    assert events == expected
    assert len(server.requests) == 1
    assert server.requests[0].body["stream"] is True


async def test_a_json_error_answering_a_stream_is_a_provider_error(server, entry):
    """``200 application/json`` holding ``{"error": …}`` instead of a completion: a ProviderError
    with the server's words (the key scrubbed), not an empty reply."""
    body = {"error": {"message": f"upstream model not loaded (key {KEY})", "type": "server_error"}}
    events, error = await _stream(server, entry, Json(body))
    assert events == []
    assert error is not None
    assert error.message.startswith("local: the server answered with an error: upstream model not loaded")
    assert KEY not in error.message


async def test_a_reply_cut_at_the_length_limit_names_it(server, entry):
    """finish_reason "length" becomes Stop('max_tokens') carrying the max_completion_tokens the
    request asked for (the model's max_output_tokens)."""
    events, error = await _stream(server, entry, Stream("openai/length.sse"))
    assert error is None
    assert server.requests[0].body["max_completion_tokens"] == 4096
    assert events[0] == TextDelta("Step 1: open the")
    assert events[-1] == Stop("max_tokens", output_limit=4096)


async def test_error_object_inside_the_stream(server, entry):
    """A compatible server that reports an error as a ``data: {"error": ...}`` chunk: a ProviderError
    carrying the server's message."""
    events, error = await _stream(
        server, entry, Stream('data: {"error": {"message": "model crashed", "type": "server_error"}}\n\n')
    )
    assert events == []
    assert error is not None
    assert error.code is ErrorCode.PROVIDER_ERROR
    assert "model crashed" in error.message


@pytest.mark.parametrize(
    ("chunk", "overflow", "retryable"),
    [
        (
            '{"error": {"code": 400, "type": "exceed_context_size_error", "message": "request (3033 tokens) '
            'exceeds the available context size (2048 tokens), try increasing it"}}',
            True,
            False,
        ),
        ('{"error": {"code": 503, "message": "upstream overloaded"}}', False, True),
    ],
    ids=["overflow", "503"],
)
async def test_an_error_inside_the_stream_is_read_as_its_http_twin(server, entry, chunk, overflow, retryable):
    """An error sent as a ``data:`` chunk after the 200 (the body llama-server sends for an overflow,
    or a proxy's upstream failure naming its code): a context overflow when its words say so, and
    retried when its code is one that is retried — as the anthropic kind reads an SSE ``error``."""
    events, error = await _stream(server, entry, Stream(f"data: {chunk}\n\n"))
    assert events == []
    assert error is not None
    assert (error.context_overflow, error.retryable) == (overflow, retryable)


async def test_a_json_overflow_answering_a_stream_is_an_overflow(server, entry):
    """``200 application/json`` holding llama-server's overflow body: a context overflow, so the turn
    compacts (the recorded body, here under a 200)."""
    body = recorded("llama-cpp/openai-overflow.txt").body
    events, error = await _stream(server, entry, Raw(200, "application/json", body))
    assert events == []
    assert error is not None
    assert error.context_overflow is True


async def test_missing_key_variable_is_not_found_naming_it(tmp_path, server):
    """With api_key_env set but the variable unset, construction fails with NOT_FOUND naming it."""
    body = provider_toml("local", "openai", server.openai_url, MODELS)
    entry = entry_from_config(tmp_path / "home", body, "local/gpt-test")
    with pytest.raises(ShardError) as info:
        OpenAIProvider(entry)
    assert info.value.code is ErrorCode.NOT_FOUND
    assert KEY_ENV in info.value.message


async def test_retry_after_as_http_date(server, entry):
    """Retry-After given as an HTTP date is turned into the seconds left until then."""
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    _, error = await _stream(server, entry, Fail(503, {"error": {"message": "busy"}}, {"retry-after": when}))
    assert error is not None
    assert error.retry_after is not None
    assert 15 <= error.retry_after <= 20

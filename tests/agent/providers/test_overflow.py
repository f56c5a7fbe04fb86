"""Every local server's "the request is too long" is a context overflow, so the turn compacts and
retries (issue 27 item 2): a real ``shard agent --stdio`` against the local test server, which answers
with each server's own body — llama.cpp's byte for byte as recorded (``fixtures/llama-cpp``), the
others as they were found, each with its source.

Then the pure recogniser (``providers/overflow.py``) on the shapes that reach it some other way: an
error inside a 200 stream, Ollama passing llama-server's JSON on as a string, a prompt echoed back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from shard.agent.providers.overflow import is_context_overflow
from shard.testing import run_shard

from ._server import ProviderServer, Raw, Stream, recorded
from ._support import FAST_RETRY, KEY, KEY_ENV, of_type, server_home

JSON = "application/json"
# Keep only the newest prompt when compacting, so two exchanges are enough to have something to cut.
SMALL_KEEP = FAST_RETRY + "\n[compaction]\nkeep_recent_tokens = 1\n"
FIRST = "Remember the launch code 7-4-1."
SECOND = "Now read the whole repository."

# vLLM 400, OpenAI-compatible server (``{"object": "error", …}`` at the top): vllm-project/vllm#20409
# and ogx-ai/ogx#4534 (the body quoted whole).
VLLM = Raw(
    400,
    JSON,
    b'{"object":"error","message":"This model\'s maximum context length is 6048 tokens. However, you '
    b"requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the length of "
    b'the messages or completion.","type":"BadRequestError","param":null,"code":400}',
)
# Ollama's OpenAI-compatible endpoint: the words are the runner's (ollama/ollama llm/llama_server.go,
# when context shift is off), the body is its ``/v1`` middleware's (middleware/openai.go writeError →
# openai.NewError: type invalid_request_error for a 400, Go's json.Encoder ending it with a newline).
OLLAMA = Raw(
    400,
    JSON,
    b'{"error":{"message":"the prompt is longer than the context length currently available to the '
    b"model; shorten the prompt, adjust the context length in settings, or use a model with a longer "
    b'context length","type":"invalid_request_error","param":null,"code":null}}\n',
)
# LM Studio 0.3: Gitlawb/openclaude#353 ("API Error: 400 {…}", the body quoted whole).
LM_STUDIO = Raw(
    400,
    JSON,
    b'{"error":"The number of tokens to keep from the initial prompt is greater than the context length '
    b"(n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a "
    b'shorter input."}',
)
# LM Studio, older: lmstudio-ai/lmstudio-bug-tracker#237 ("BadRequestError 400") and #546; the body as
# dyad-sh/dyad#925 logged it.
LM_STUDIO_OLD = Raw(
    400,
    JSON,
    b'{"error":"Trying to keep the first 14538 tokens when context the overflows. However, the model is '
    b"loaded with context length of only 2048 tokens, which is not enough. Try to load the model with a "
    b'larger context length, or provide a shorter input"}',
)
# A LiteLLM proxy: the upstream's words (BerriAI/litellm#18927) behind the prefixes its exception
# classes add (litellm/exceptions.py ContextWindowExceededError, BadRequestError), in the proxy's
# error body (OpenHands/OpenHands#5350 quotes one whole: type and param null, code "400").
LITELLM = Raw(
    400,
    JSON,
    b'{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: '
    b"ContextWindowExceededError: OpenAIException - Input tokens exceed the configured limit of 272000 "
    b'tokens.","type":null,"param":null,"code":"400"}}',
)
# llama.cpp before its overflow was a 400: the same type with a 500 (ggml-org/llama.cpp#15780).
LLAMA_CPP_500 = Raw(
    500,
    JSON,
    b'{"error":{"code":500,"message":"the request exceeds the available context size. try increasing '
    b'the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,'
    b'"n_ctx":256}}',
)


@pytest.fixture
def home_for(tmp_path: Path, server: ProviderServer) -> Callable[[str], Path]:
    """Either kind as ``local/m``, compacting down to the newest prompt."""
    return lambda kind: server_home(tmp_path / "home", server, kind, retry=SMALL_KEEP)


def _text(read: list[dict]) -> str:
    message = of_type(read, "message_complete")[-1]["message"]
    return "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")


@pytest.mark.parametrize(
    ("kind", "overflow"),
    [
        ("openai", recorded("llama-cpp/openai-overflow-stream.txt")),
        ("anthropic", recorded("llama-cpp/anthropic-overflow-stream.txt")),
        ("openai", VLLM),
        ("openai", OLLAMA),
        ("openai", LM_STUDIO),
        ("openai", LM_STUDIO_OLD),
        ("openai", LITELLM),
    ],
    ids=["llama.cpp-openai", "llama.cpp-anthropic", "vllm", "ollama", "lmstudio", "lmstudio-old", "litellm"],
)
async def test_a_server_saying_the_request_is_too_long_gets_a_compaction_and_one_retry(
    spawn, server, kind, overflow
):
    """After one exchange, the second prompt's request is refused as too long, in that server's
    words: the agent compacts (``status compacting``, a ``compaction`` event; the summary asked of
    the same server) and sends the request once more, now without the first exchange, and the
    answer comes — no error. Four requests in all: the first prompt, the refused one, the summary,
    the retry.

    Covers: R9.4.19, R9.2.57
    """
    text = "openai/text.sse" if kind == "openai" else "anthropic/text.sse"
    agent = await spawn(kind)
    server.replies.append(Stream(text))
    await agent.send({"type": "prompt", "message": FIRST})
    await agent.idle()

    server.replies.extend([overflow, Stream(text), Stream(text)])
    await agent.send({"type": "prompt", "message": SECOND})
    read = await agent.idle()
    assert of_type(read, "error") == []
    assert [m["status"] for m in of_type(read, "status")].count("compacting") == 1
    assert len(of_type(read, "compaction")) == 1
    assert _text(read) == "Hello, world!"
    assert len(server.requests) == 4
    refused, summary, retried = (orjson.dumps(r.body).decode() for r in server.requests[1:])
    assert FIRST in refused
    assert "working memory" in summary  # the summarizer's own system prompt
    assert FIRST not in retried
    assert SECOND in retried


async def test_an_overflow_with_nothing_to_compact_is_one_request_and_one_error(home_for, project, server):
    """``shard run`` whose very first request is refused as too long by an older llama.cpp (a 500
    with ``exceed_context_size_error``): not retried as a server error (one request, no "retrying"),
    nothing before the prompt to compact, so one error saying the context is too long, with the
    server's figures; exit 1.

    Covers: R8.17
    """
    server.replies.append(LLAMA_CPP_500)
    code, out, err = await run_shard(home_for("openai"), project, "run", SECOND, env={KEY_ENV: KEY})
    lines = err.decode().splitlines()
    assert code == 1
    assert out == b""
    assert len(server.requests) == 1
    assert not [line for line in lines if "retrying" in line]
    [error] = [line for line in lines if "PROVIDER_ERROR" in line]
    assert error.startswith("shard: PROVIDER_ERROR: the context is too long for the model (local: HTTP 500: ")
    assert "the request exceeds the available context size" in error


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # the openai SDK raises an error sent in a 200 stream with the error member alone (status None)
        (None, {"code": 400, "message": "the request exceeds the available context size", "type": "x"}),
        # Ollama's native /api/chat with truncate:false passes llama-server's JSON on as a string
        (
            400,
            {
                "error": '{"error":{"code":400,"message":"request (8889 tokens) exceeds the available '
                'context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}'
            },
        ),
        (400, "Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"),  # LM Studio 0.4 (opencode#11141)
        (413, {"error": {"type": "request_too_large", "message": "prompt is too long: 210412 tokens"}}),
    ],
    ids=["in-stream", "ollama-wrapping-llama-server", "lm-studio-0.4", "413"],
)
def test_the_recogniser_reads_every_shape_of_an_overflow(status, body):
    """The one function both adapters ask, over (status, body), on the shapes the turn tests above
    do not reach."""
    assert is_context_overflow(status, body) is True


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "tool_use ids must be unique", "type": "invalid_request_error"}}),
        (500, {"error": {"message": "maximum context length is 8192 tokens", "type": "server_error"}}),
        (429, "Too many tokens per minute"),
        # a server echoing the request back: the prompt's words are not the error's
        (400, {"error": {"message": "invalid tool schema"}, "input": "the context window is full"}),
    ],
    ids=["another-400", "words-on-a-500", "rate-limit", "echoed-prompt"],
)
def test_the_recogniser_reads_only_an_errors_own_words_on_a_400(status, body):
    """Not an overflow: another 400, the words on a status that is no refusal of the request, and
    words the body only echoes."""
    assert is_context_overflow(status, body) is False

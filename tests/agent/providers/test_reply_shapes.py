"""The shapes a local server's reply takes, handled alike by both provider kinds (issue 27 item 4),
through ``shard run`` and a ``shard agent --stdio`` against the local test server replaying what
llama.cpp's ``llama-server`` sent (``fixtures/llama-cpp``, byte for byte; a shape no recording holds
is made from a recorded one, and says how):

* a whole JSON message answering the Anthropic kind's streaming request is the reply, not a stream
  of zero events retried until it gives up;
* a reply with nothing in it — usage only, no content block, an empty message — is retried, then one
  error saying the model returned an empty reply; never a silent success."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from shard.testing import run_shard

from ._server import ProviderServer, Raw, recorded, sse_events
from ._support import KEY, KEY_ENV, provider_toml, write_home

# As the recordings asked: an output limit of 12 tokens.
MODELS = '[{ id = "m", max_output_tokens = 12 }]'
WHOLE_CALL = {kind: recorded(f"llama-cpp/{kind}-tool-call-stream.txt") for kind in ("openai", "anthropic")}


def _usage_only() -> Raw:
    """llama-server's recorded tool-call stream without the call: its opening chunk (a role), its
    closing chunk saying ``stop``, its usage chunk and ``[DONE]``."""
    whole = WHOLE_CALL["openai"]
    events = sse_events(whole.body.decode())
    closing = events[-3].replace('"finish_reason":"tool_calls"', '"finish_reason":"stop"')
    return Raw(200, whole.content_type, "".join([events[0], closing, *events[-2:]]).encode())


def _no_content_block() -> Raw:
    """llama-server's recorded Messages stream without its content block: ``message_start``, then
    ``message_delta`` saying ``end_turn``, ``message_stop``."""
    whole = WHOLE_CALL["anthropic"]
    events = sse_events(whole.body.decode())
    delta = events[-2].replace('"stop_reason":"tool_use"', '"stop_reason":"end_turn"')
    return Raw(200, whole.content_type, "".join([events[0], delta, events[-1]]).encode())


def _empty_message() -> Raw:
    """llama-server's recorded whole Messages reply with no content and ``end_turn``."""
    whole = recorded("llama-cpp/anthropic-json-reply.json")
    message = {**orjson.loads(whole.body), "content": [], "stop_reason": "end_turn"}
    return Raw(200, whole.content_type, orjson.dumps(message))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Demo\nThe launch code is 7-4-1.\n")
    return root


def _home(tmp_path: Path, server: ProviderServer, kind: str) -> Path:
    url = server.openai_url if kind == "openai" else server.anthropic_url
    return write_home(tmp_path / "home", provider_toml("local", kind, url, MODELS), default_model="local/m")


Ran = tuple[int, str, list[str]]


async def _run(tmp_path: Path, project: Path, server: ProviderServer, kind: str) -> Ran:
    """``shard run`` against the test server: exit status, stdout, stderr's lines."""
    code, out, err = await run_shard(
        _home(tmp_path, server, kind), project, "run", "List the project.", env={KEY_ENV: KEY}
    )
    return code, out.decode(), err.decode().splitlines()


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("shard: PROVIDER_ERROR")]


async def test_the_anthropic_kind_takes_a_whole_json_message_as_the_reply(tmp_path, project, server):
    """llama-server answers the streaming Messages request with the whole message as JSON: ``shard
    run`` shows its text after one request — no "retrying", no "stream ended" — and, since the
    message says ``max_tokens``, says the reply was cut and exits 1 as for any cut reply."""
    server.replies.append(recorded("llama-cpp/anthropic-json-reply.json"))
    code, out, err = await _run(tmp_path, project, server, "anthropic")
    assert out == "Hello there! I'should've been a little bit confused. I'm here to help with\n"
    assert len(server.requests) == 1
    assert not [line for line in err if "retrying" in line or "stream ended" in line]
    assert "shard: reply cut off: max tokens" in err
    [error] = _errors(err)
    assert "cut at the model's output limit (max_tokens 12)" in error
    assert code == 1


@pytest.mark.parametrize(
    ("kind", "reply"),
    [("openai", _usage_only()), ("anthropic", _no_content_block()), ("anthropic", _empty_message())],
    ids=["openai-usage-only", "anthropic-no-content-block", "anthropic-empty-json-message"],
)
async def test_an_empty_reply_is_retried_then_one_error(tmp_path, project, server, kind, reply):
    """Every attempt answers with nothing but usage and a stop: ``shard run`` retries it within
    ``[retry] max_attempts`` (3 here), then says the model returned an empty reply and exits 1 —
    nothing on stdout, never a silent exit 0.

    Covers: R8.17, R9.4.23
    """
    server.replies.extend([reply] * 3)
    code, out, err = await _run(tmp_path, project, server, kind)
    assert out == ""
    assert len(server.requests) == 3
    [error] = _errors(err)
    assert "the model returned an empty reply" in error
    assert error.endswith("(gave up after 3 attempts)")
    assert code == 1

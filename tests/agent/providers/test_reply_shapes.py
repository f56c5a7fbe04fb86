"""The shapes a local server's reply takes, handled alike by both provider kinds (issue 27 items 4 and
5), through ``shard run`` and a ``shard agent --stdio`` against the local test server replaying what
llama.cpp's ``llama-server`` sent (``fixtures/llama-cpp``, byte for byte; a shape no recording holds
is made from a recorded one, and says how):

* a whole JSON message answering the Anthropic kind's streaming request is the reply, not a stream
  of zero events retried until it gives up;
* a reply with nothing in it — usage only, no content block, an empty message — is retried, then one
  error saying the model returned an empty reply; never a silent success;
* a tool call the output limit cut never runs: its result says it was cut, the model is asked once
  more, and a second cut is one error naming the limit and the call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from shard.agent.output_limit import CUT_CALL
from shard.testing import run_shard, types

from ._server import ProviderServer, Raw, Stream, recorded, sse_events
from ._support import KEY, KEY_ENV, of_type, server_home

# As the recordings asked: an output limit of 12 tokens.
MODELS = '[{ id = "m", max_output_tokens = 12 }]'
CUT = {kind: recorded(f"llama-cpp/{kind}-tool-call-cut-stream.txt") for kind in ("openai", "anthropic")}
WHOLE_CALL = {kind: recorded(f"llama-cpp/{kind}-tool-call-stream.txt") for kind in ("openai", "anthropic")}
ANSWER = {"openai": "openai/answer.sse", "anthropic": "anthropic/text.sse"}
ANSWER_TEXT = {"openai": "The README says the launch code is 7-4-1.", "anthropic": "Hello, world!"}


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


def _cut_before_anything(kind: str) -> Raw:
    """llama-server's recorded cut tool call without the call, as a real llama-server sent it to
    ``shard run`` (role, ``finish_reason: length``, usage; a Messages stream's start, its
    ``max_tokens`` delta and stop): the model began a call the server held back."""
    cut = CUT[kind]
    events = sse_events(cut.body.decode())
    kept = [events[0], *events[2:]] if kind == "openai" else [events[0], *events[-2:]]
    return Raw(200, cut.content_type, "".join(kept).encode())


Ran = tuple[int, str, list[str]]


@pytest.fixture
def home_for(tmp_path: Path, server: ProviderServer) -> Callable[[str], Path]:
    """Either kind as ``local/m``, with the output limit the recordings asked for."""
    return lambda kind: server_home(tmp_path / "home", server, kind, models=MODELS)


async def _run(home: Path, project: Path) -> Ran:
    """``shard run`` on ``home`` (the test server's): exit status, stdout, stderr's lines."""
    code, out, err = await run_shard(home, project, "run", "List the project.", env={KEY_ENV: KEY})
    return code, out.decode(), err.decode().splitlines()


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("shard: PROVIDER_ERROR")]


async def test_the_anthropic_kind_takes_a_whole_json_message_as_the_reply(home_for, project, server):
    """llama-server answers the streaming Messages request with the whole message as JSON: ``shard
    run`` shows its text after one request — no "retrying", no "stream ended" — and, since the
    message says ``max_tokens``, says the reply was cut and exits 1 as for any cut reply."""
    server.replies.append(recorded("llama-cpp/anthropic-json-reply.json"))
    code, out, err = await _run(home_for("anthropic"), project)
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
async def test_an_empty_reply_is_retried_then_one_error(home_for, project, server, kind, reply):
    """Every attempt answers with nothing but usage and a stop: ``shard run`` retries it within
    ``[retry] max_attempts`` (3 here), then says the model returned an empty reply and exits 1 —
    nothing on stdout, never a silent exit 0.

    Covers: R8.17, R9.4.23
    """
    server.replies.extend([reply] * 3)
    code, out, err = await _run(home_for(kind), project)
    assert out == ""
    assert len(server.requests) == 3
    [error] = _errors(err)
    assert "the model returned an empty reply" in error
    assert error.endswith("(gave up after 3 attempts)")
    assert code == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_reply_cut_before_anything_came_is_one_error_not_retried(home_for, project, server, kind):
    """A reply the output limit stopped before any text or call came is no empty reply to retry —
    the same limit would stop it again: one request, one error naming the limit, exit 1.

    Covers: R8.17, R9.4.23
    """
    server.replies.append(_cut_before_anything(kind))
    code, out, err = await _run(home_for(kind), project)
    assert out == ""
    assert len(server.requests) == 1
    assert not [line for line in err if "retrying" in line]
    [error] = _errors(err)
    assert error == (
        "shard: PROVIDER_ERROR: local: the reply was cut at the model's output limit (max_tokens 12) before "
        "any of it came; max_output_tokens of local/m in config.toml sets the limit"
    )
    assert code == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_call_cut_by_the_output_limit_never_runs(spawn, server, kind):
    """llama-server streams the arguments ``{`` and stops at the output limit, twice: the call never
    runs (no ``tool_call`` event), each gets one error result saying it was cut, the model is asked
    once more (the second request carries that result), and the second cut ends the turn with one
    error naming the limit and the call. Two requests in all; no "not valid JSON".

    Covers: R8.18, R9.4.14, R9.4.23, R9.4.25
    """
    server.replies.extend([CUT[kind], CUT[kind]])
    agent = await spawn(kind)
    await agent.send({"type": "prompt", "message": "List the project."})
    read = await agent.idle()
    assert "tool_call" not in types(read)
    results = of_type(read, "tool_result")
    assert [(r["is_error"], r["content"]["message"]) for r in results] == [(True, CUT_CALL)] * 2
    [error] = of_type(read, "error")
    assert error["message"] == (
        "the reply was cut at the model's output limit (max_tokens 12) in the middle of a call to 'ls', "
        "which did not run, after the model was told of the cut and asked again. max_output_tokens of "
        "local/m in config.toml sets the limit"
    )
    assert "turn_end" in types(read)
    assert len(server.requests) == 2
    assert CUT_CALL in orjson.dumps(server.requests[1].body).decode()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_cut_call_made_anew_runs_and_the_run_succeeds(home_for, project, server, kind):
    """The first reply is cut in the call; told so, the model makes the whole call (recorded): it runs,
    the answer follows, and ``shard run`` exits 0 with no error — three requests."""
    server.replies.extend([CUT[kind], WHOLE_CALL[kind], Stream(ANSWER[kind])])
    code, out, err = await _run(home_for(kind), project)
    assert _errors(err) == []
    assert out == ANSWER_TEXT[kind] + "\n"
    assert "» ls path=." in err
    assert len(server.requests) == 3
    assert code == 0


async def test_shard_run_says_a_cut_call_once(home_for, project, server):
    """``shard run`` with both replies cut in the call: exit 1 and one error line; the call is
    never said to have failed on its arguments."""
    server.replies.extend([CUT["openai"], CUT["openai"]])
    code, _, err = await _run(home_for("openai"), project)
    [error] = _errors(err)
    assert "in the middle of a call to 'ls', which did not run" in error
    assert not [line for line in err if "not valid JSON" in line]
    assert len(server.requests) == 2
    assert code == 1


async def test_with_retries_off_a_cut_call_ends_the_turn_at_once(tmp_path, project, server):
    """``[retry] max_attempts = 1`` turns every second try off, this one too: one request, and the
    cut is the one error at once."""
    retry_off = "[retry]\nmax_attempts = 1\n"
    home = server_home(tmp_path / "home", server, "openai", models=MODELS, retry=retry_off)
    server.replies.append(CUT["openai"])
    code, _, err = await run_shard(home, project, "run", "List the project.", env={KEY_ENV: KEY})
    [error] = _errors(err.decode().splitlines())
    assert error == (
        "shard: PROVIDER_ERROR: the reply was cut at the model's output limit (max_tokens 12) in the "
        "middle of a call to 'ls', which did not run. max_output_tokens of local/m in config.toml sets "
        "the limit"
    )
    assert len(server.requests) == 1
    assert code == 1

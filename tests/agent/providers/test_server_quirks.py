"""What real OpenAI-compatible servers do, through the real turn loop (a ``shard agent --stdio``
process against the local test server): a whole JSON completion answering a streaming request, a
reply with nothing in it, and a reply cut at the output limit. Ends with ``shard run`` end to end."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from shard.testing import types

from ._server import Json, Stream
from ._support import KEY, KEY_ENV, of_type, session_entries

CUT = "the reply was cut at the model's output limit"


def _assistant(read: list[dict]) -> list[dict]:
    return [m["message"] for m in of_type(read, "message_complete") if m["message"]["role"] == "assistant"]


async def test_a_json_completion_is_taken_as_the_reply(spawn, server):
    """llama-server answers the streaming request with ``200 application/json``: the tool call in
    it runs and the next JSON completion is the answer — two requests in all (no retry), no error,
    usage reported for both calls.

    Covers: R9.4.18
    """
    server.replies.extend([Json("openai/llama_server_tool_call.json"), Json("openai/llama_server_text.json")])
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "What does the README say?"})
    read = await agent.idle()
    assert "error" not in types(read)
    assert not [m for m in of_type(read, "status") if "detail" in m], "nothing was retried"
    first, answer = _assistant(read)
    assert first["content"][0]["type"] == "tool_call"
    assert [r for r in of_type(read, "tool_result") if not r["is_error"]]
    assert answer["content"] == [
        {"type": "thinking", "text": "The README names the code."},
        {"type": "text", "text": "The launch code is 7-4-1."},
    ]
    assert [u["output"] for u in of_type(read, "usage")] == [21, 14]
    assert len(server.requests) == 2


async def test_a_reply_with_nothing_in_it_fails_the_turn_and_records_nothing(spawn, server, tmp_path):
    """Every attempt answers with a role and finish_reason but no content and no usage: after the
    configured attempts, one non-fatal PROVIDER_ERROR naming the cause, no assistant message (in
    events or in the session), the turn ends, and the next prompt works.

    Covers: R8.17, R9.4.23, R9.4.25
    """
    server.replies.extend([Stream("openai/empty_reply.sse") for _ in range(3)])
    agent = await spawn()
    await agent.send({"type": "prompt", "message": "hello"})
    read = await agent.idle()
    [error] = of_type(read, "error")
    assert (error["code"], error["fatal"]) == ("PROVIDER_ERROR", False)
    assert "the model returned an empty reply" in error["message"]
    assert "finish_reason 'stop'" in error["message"]
    assert "gave up after 3 attempts" in error["message"]
    assert _assistant(read) == []
    assert "turn_end" in types(read)
    assert len(server.requests) == 3
    assert not [
        e for e in session_entries(tmp_path / "home") if e.get("message", {}).get("role") == "assistant"
    ]

    server.replies.append(Stream("openai/text.sse"))
    await agent.send({"type": "prompt", "message": "again"})
    read2 = await agent.idle()
    assert "error" not in types(read2)
    assert _assistant(read2)[0]["content"] == [{"type": "text", "text": "Hello, world!"}]


@pytest.mark.parametrize(
    ("kind", "fixture", "limit"),
    [
        ("openai", "openai/length.sse", "the server's own max_tokens"),
        ("anthropic", "anthropic/max_tokens.sse", "max_tokens 16384"),
    ],
    ids=["openai-length", "anthropic-max_tokens"],
)
async def test_a_reply_cut_at_the_output_limit_is_kept_and_reported(
    spawn, server, tmp_path, kind, fixture, limit
):
    """OpenAI ``finish_reason: "length"`` / Anthropic ``stop_reason: "max_tokens"``: the message is
    kept (message_complete and its session entry, both saying ``stop_reason: "max_tokens"``), then
    one non-fatal PROVIDER_ERROR says the reply was cut and at which limit; the turn ends normally.

    Covers: R9.4.23, R9.4.25
    """
    server.replies.append(Stream(fixture))
    agent = await spawn(kind)
    await agent.send({"type": "prompt", "message": "write the steps"})
    read = await agent.idle()
    [message] = _assistant(read)
    assert message["content"] == [{"type": "text", "text": "Step 1: open the"}]
    [error] = of_type(read, "error")
    assert (error["code"], error["fatal"]) == ("PROVIDER_ERROR", False)
    assert error["message"].startswith(f"{CUT} ({limit}); what arrived is kept.")
    assert "max_output_tokens" in error["message"]
    seq = [t for t in types(read) if t not in ("message_delta", "status")]
    assert seq[-4:] == ["message_complete", "usage", "error", "turn_end"]
    [entry] = [e for e in session_entries(tmp_path / "home") if e.get("id") == message["id"]]
    assert entry["stop_reason"] == "max_tokens"
    assert "incomplete" not in entry
    assert message["stop_reason"] == entry["message"]["stop_reason"] == "max_tokens"


async def _shard_run(home: Path, project: Path, prompt: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_KEY")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shard",
        "run",
        prompt,
        cwd=project,
        env={**env, "SHARD_HOME": str(home), KEY_ENV: KEY},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, stdout.decode(), stderr.decode()


async def test_shard_run_warns_and_fails_when_the_reply_was_cut(home_for, project, server):
    """``shard run`` with a reply cut at the output limit: stdout has what arrived, stderr says the
    reply was cut off and why, and the exit status is 1 — a script never takes half an answer for a
    whole one."""
    server.replies.append(Stream("openai/length.sse"))
    code, out, err = await _shard_run(home_for("openai"), project, "write the steps")
    assert out == "Step 1: open the\n"
    warnings = [line for line in err.splitlines() if CUT in line]
    assert warnings == [
        f"shard: PROVIDER_ERROR: {CUT} (the server's own max_tokens); what arrived is kept. "
        "max_output_tokens of local/m in config.toml sets the limit"
    ]
    assert "shard: reply cut off: max tokens" in err.splitlines()
    assert code == 1, err


async def test_shard_run_takes_json_completions(home_for, project, server):
    """``shard run`` against a server answering with whole JSON completions (a tool call, then the
    answer): exit 0 and stdout is the answer."""
    server.replies.extend([Json("openai/llama_server_tool_call.json"), Json("openai/llama_server_text.json")])
    code, out, err = await _shard_run(home_for("openai"), project, "What does the README say?")
    assert code == 0, err
    assert out == "The launch code is 7-4-1.\n"
    assert len(server.requests) == 2

"""Figures that add up (issue 27 item 6): ``shard run``'s closing line counts every input token,
those the server read from its prompt cache included — "10 tokens in" was said for a 2,174-token
request llama.cpp answered from its cache.

Both provider kinds report the cached tokens apart (``cache_read``): the openai kind takes them out
of ``prompt_tokens``, the anthropic kind has them in ``cache_read_input_tokens``. The first reply
of each run replays llama-server's recorded stream (``fixtures/llama-cpp/*-tool-call-stream.txt``:
227 prompt tokens, 226 of them cached); the second is the issue's 2,174-token request, 2,164 cached.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from shard.cli.run_output import TextPrinter
from shard.protocol.agents import Usage
from shard.protocol.events import TurnEnd
from shard.protocol.figures import tokens_in, window_said

from ._server import FIXTURES, ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home

OPENAI_ANSWER = (
    'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":"Two files."}}],'
    '"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}\n\n'
    'data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"c","model":"m",'
    '"object":"chat.completion.chunk"}\n\n'
    'data: {"choices":[],"created":1,"id":"c","model":"m","object":"chat.completion.chunk","usage":'
    '{"completion_tokens":5,"prompt_tokens":2174,"total_tokens":2179,"prompt_tokens_details":{"cached_tokens":2164}}}\n\n'
    "data: [DONE]\n\n"
)
ANTHROPIC_ANSWER = (
    "event: message_start\n"
    'data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],'
    '"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"cache_read_input_tokens":2164,'
    '"input_tokens":10,"output_tokens":0}}}\n\n'
    "event: content_block_start\n"
    'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    "event: content_block_delta\n"
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Two files."}}\n\n'
    "event: content_block_stop\n"
    'data: {"type":"content_block_stop","index":0}\n\n'
    "event: message_delta\n"
    'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    '"usage":{"output_tokens":5}}\n\n'
    "event: message_stop\n"
    'data: {"type":"message_stop"}\n\n'
)


def recorded_body(name: str) -> str:
    """The response body of a recorded llama-server exchange (after its status and headers)."""
    text = (FIXTURES / "llama-cpp" / name).read_text()
    response = text.split("\n\nHTTP ", 1)[1]
    return response.split("\n\n", 1)[1]


async def _run(home: Path, project: Path) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shard",
        "run",
        "--allow",
        "ls",
        "list the files",
        cwd=project,
        env={**os.environ, "SHARD_HOME": str(home), KEY_ENV: KEY},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(
    ("kind", "recorded", "answer"),
    [
        ("openai", "openai-tool-call-stream.txt", OPENAI_ANSWER),
        ("anthropic", "anthropic-tool-call-stream.txt", ANTHROPIC_ANSWER),
    ],
)
async def test_the_closing_line_counts_cached_tokens(
    tmp_path, server: ProviderServer, kind, recorded, answer
):
    """Two calls: 227 + 2,174 = 2,401 tokens in (not 1 + 10), 28 + 5 out."""
    project = tmp_path / "project"
    project.mkdir()
    url = server.openai_url if kind == "openai" else server.anthropic_url
    home = write_home(
        tmp_path / "home", provider_toml("local", kind, url, '[{ id = "smollm2", context_window = 8192 }]')
    )
    home.chmod(0o700)
    (home / "config.toml").write_text(
        'default_model = "local/smollm2"\n' + (home / "config.toml").read_text()
    )
    server.replies.extend([Stream(recorded_body(recorded)), Stream(answer)])
    code, out, err = await _run(home, project)
    assert code == 0, err
    assert out.strip() == "Two files."
    closing = err.splitlines()[-1]
    assert closing.startswith("[2,401 tokens in, 33 out · session "), closing


def test_the_printer_sums_every_turn_and_every_input_token(capsys):
    """A run whose agent took a queued follow-up has two turn_ends: both count; a usage as a plain
    dict (through a daemon) counts the same as the model."""
    printer = TextPrinter(lambda: None)
    printer.show(TurnEnd(turn_id="t1", usage=Usage(input=10, output=5, cache_read=2164, cost=0.001)))
    printer.show(
        TurnEnd(turn_id="t2", usage=Usage(input=3, output=2, cache_write=100, cache_read=7, cost=0.002))
    )
    printer.finish("sess-1")
    assert capsys.readouterr().err.splitlines()[-1] == "[2,284 tokens in, 7 out · $0.0030 · session sess-1]"


def test_tokens_in_and_the_window_as_said():
    usage: dict[str, Any] = {"input": 10, "output": 1, "cache_read": 2164}
    assert tokens_in(usage) == 2174 == tokens_in(Usage(input=10, output=1, cache_read=2164))
    assert tokens_in({"input": 5, "output": 1}) == 5
    assert window_said(8192, "server") == "8,192 from the server"
    assert window_said(200_000, "builtin") == "200,000 from Shard's catalog"
    assert window_said(8192, "default") == "8,192 Shard's default"

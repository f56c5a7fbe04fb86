"""A session that outgrows an 8,192-token window keeps going through compaction (issue 27, "Shows").

A real ``shard run`` then ``shard run --continue`` after it, against a local stand-in for
llama-server (``shard.testing.llama_server``): it says its context on ``/v1/models``
(``meta.n_ctx``, as the recorded ``models.json``), counts each request's tokens (4 bytes a token)
and answers one longer than 8,192 with llama.cpp's own HTTP 400 ``exceed_context_size_error`` body
(``openai-overflow.txt``). Each prompt has the model read a file of ~1,600 tokens, so the
conversation passes the window by the third prompt. ``bench/small_window.py`` runs the same session
longer and saves its figures.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from shard.testing import run_shard

from ._server import FIXTURES
from ._support import provider_toml, write_home

RUNS = 7


@pytest.mark.long
async def test_a_session_past_8k_tokens_compacts_and_goes_on(tmp_path: Path):
    """Covers: R9.4.20, R9.4.21, R9.4.19

    Every run exits 0 with the model's answer; compaction runs, each time well under what it found;
    no request reaches the server's limit (so no 400 is ever answered); the window is the server's,
    said in the first line; the closing line counts the cached prompt tokens too."""
    # the stand-in is imported by the tests, not at the top: it imports aiohttp, and every xdist
    # worker imports this module to collect the suite
    from shard.testing.llama_server import LlamaServer, write_notes

    project = tmp_path / "project"
    names = write_notes(project, RUNS)
    server = await LlamaServer.start(n_ctx=8192)
    try:
        body = provider_toml("local", "openai", server.url, '["qwen"]', key_env=None)
        home = write_home(tmp_path / "home", body, default_model="local/qwen")
        home.chmod(0o700)
        for i, name in enumerate(names):
            args = ["run", *(["--continue"] if i else []), f"read {name} and say how it begins"]
            code, out, err = await run_shard(home, project, *args, timeout=120)
            lines = err.decode().splitlines()
            assert code == 0, err.decode()
            first_line = f"{name} line 0000: notes kept for the small-window test"
            assert out.decode().strip() == f"The file begins: {first_line}"
            assert lines[0].startswith("shard: local/qwen (window 8,192 from the server; mode build)")
            closing = re.search(r"\[([\d,]+) tokens in", lines[-1])
            assert closing is not None, lines[-1]
            tokens_in = int(closing.group(1).replace(",", ""))
            turn = [s for s in server.requests if not s.summary][-2:]  # the read call and the answer
            assert tokens_in == sum(s.tokens for s in turn), "every input token, cached ones included"
    finally:
        await server.close()
    session = next((home / "sessions").glob("*/session.jsonl"))
    entries = [orjson.loads(line) for line in session.read_bytes().splitlines()]
    compactions = [(e["tokens_before"], e["tokens_after"]) for e in entries if e["kind"] == "compaction"]
    print(f"\ncompactions on an 8,192-token window (tokens before → after): {compactions}")
    print(f"largest request the server counted: {max(s.tokens for s in server.requests):,}")
    assert len(compactions) >= 2
    for before, after in compactions:
        assert after < before - 1500
    assert all(s.status == 200 for s in server.requests), "never over the window"
    assert max(s.tokens for s in server.requests) <= 8192
    assert sum(s.summary for s in server.requests) == len(compactions)


def test_the_stand_in_answers_overflow_as_llama_server_does():
    """The overflow body is the recorded one, byte for byte, given the same figures."""
    from shard.testing.llama_server import OVERFLOW_BODY

    recorded = (FIXTURES / "llama-cpp" / "openai-overflow.txt").read_text()
    status, _, rest = recorded.partition("\n\nHTTP ")[2].partition("\n")
    assert status == "400"
    body = rest.split("\n\n", 1)[1].strip()
    assert OVERFLOW_BODY.format(n=3033, n_ctx=2048) == body
    models = orjson.loads((FIXTURES / "llama-cpp" / "models.json").read_bytes())
    assert set(models["data"][0]["meta"]) >= {"n_ctx", "n_ctx_train"}

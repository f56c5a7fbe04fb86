"""End to end: ``shard run`` against an OpenAI-compatible test server — the model calls the ``read``
tool on a file in the project, then answers from the tool result."""

from __future__ import annotations

import asyncio
import os
import sys

from ._server import ProviderServer, Stream
from ._support import KEY, KEY_ENV, provider_toml, write_home

README = "# Demo\nThe launch code is 7-4-1.\n"
CALL_ID = "call_DdmO9pD3xa9XTPNJ32zg2hcA"  # the id in fixtures/openai/tool_call.sse


async def test_shard_run_reads_a_file_and_answers(tmp_path, server: ProviderServer):
    """``shard run PROMPT`` with an openai-kind provider: the first response calls ``read`` on
    README.md, the second answers. Exit code 0, stdout is exactly the answer text, and the second
    request carries the assistant's tool call (JSON-string arguments) followed by a role "tool"
    message holding the file's content."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text(README)
    home = write_home(
        tmp_path / "home",
        provider_toml("local", "openai", server.openai_url, '[{ id = "m", context_window = 32768 }]'),
        default_model="local/m",
    )
    server.replies.extend([Stream("openai/tool_call.sse"), Stream("openai/answer.sse")])
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shard",
        "run",
        "What does the README say?",
        cwd=project,
        env={**os.environ, "SHARD_HOME": str(home), KEY_ENV: KEY},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, stderr.decode()
    assert stdout.decode() == "The README says the launch code is 7-4-1.\n"
    assert len(server.requests) == 2
    first, second = (r.body for r in server.requests)
    assert first["messages"][-1] == {"role": "user", "content": "What does the README say?"}
    assert second["messages"][:2] == first["messages"][:2]
    call, result = second["messages"][-2:]
    assert call == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": CALL_ID,
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"README.md"}'},
            }
        ],
    }
    assert result["role"] == "tool"
    assert result["tool_call_id"] == CALL_ID
    assert README in result["content"]
    assert KEY not in stderr.decode()

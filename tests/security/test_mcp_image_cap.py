"""An MCP tool's images reach the model under the ``read`` tool's cap (issue 25 item 8): a real
``shard agent --stdio`` on the scripted provider, calling a real stdio MCP server (the demo server of
tests/agent/mcp) that returns PNG images of a chosen size."""

from __future__ import annotations

from pathlib import Path

import orjson

from agent.mcp._servers import server_toml
from shard.agent.tools.images import MAX_IMAGE_BYTES
from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home

BIG = 8 * 1024 * 1024  # the image that became an 11 MB request
SMALL = 2 * 1024 * 1024


async def test_an_mcp_image_over_the_cap_is_a_line_not_an_11_mb_request(home: Path, project: Path) -> None:
    """An 8 MB image comes back as a text line naming its size and the cap, and the next request to
    the provider stays small; images under the cap pass until their sum in one call would pass it —
    two of 2 MB reach the model, the third of the same call is a line.

    Covers: R9.4.14, R11.0.1 (the cap itself is issue 25 item 8; no rule names it)
    """
    steps = [
        tool_step("demo__picture", {"size": BIG}),
        tool_step("demo__picture", {"size": SMALL, "count": 3}),
        text_step("done"),
    ]
    write_scripted_home(home, steps, extra_toml=server_toml())
    agent = await AgentProcess.start(home, project)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "look"})
        await agent.idle()
    finally:
        await agent.kill()
    first, second = [m for m in agent.seen if m["type"] == "tool_result"]
    assert first.get("is_error") is not True
    assert first["content"]["kind"] == "text"
    assert f"{BIG} bytes" in first["content"]["text"]
    assert f"{MAX_IMAGE_BYTES} bytes" in first["content"]["text"]
    recorded = (home / "requests.jsonl").read_bytes().splitlines()
    lines = [line for line in recorded if orjson.loads(line)["purpose"] == "turn"]  # not the title's
    assert len(lines) == 3, "three model calls in the turn"
    assert len(lines[1]) < 1024 * 1024, "the request after the 8 MB image carries no image"
    assert f"{SMALL} bytes after {2 * SMALL} bytes" in second["content"]["text"]
    assert 2 * SMALL < len(lines[2]) < MAX_IMAGE_BYTES * 4 // 3 + 1024 * 1024  # two images, base64

"""A write or edit that changes nothing says "no change" (issue 26 item 10) — in the permission
prompt, in the result the model and every client read, and in the render (a diff with no hunks,
which clients show as "No change") — and leaves the file's bytes and modification time alone."""

from __future__ import annotations

import os
from pathlib import Path

from shard.agent.tools.base import ToolContext, ToolOutput
from shard.agent.tools.edit import EditTool
from shard.agent.tools.write import WriteTool
from shard.protocol.content import TextContent
from shard.protocol.render import DiffRender


def _text(out: ToolOutput) -> str:
    assert isinstance(out.content, TextContent)
    return out.content.text


def _state(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _aged(path: Path) -> tuple[bytes, int]:
    """The file's state after setting its modification time far in the past (a rewrite would move it)."""
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    return _state(path)


async def test_writing_what_a_file_already_holds_says_no_change(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")  # a BOM and CRLF: still the same content
    before = _aged(notes)
    tool, ctx = WriteTool(), ToolContext(cwd=tmp_path)
    args = tool.parse({"path": "notes.txt", "content": "one\ntwo\n"})

    prompt, details = tool.describe(args, ctx)
    assert prompt == "Write notes.txt (no change: it already holds this content)?"
    assert [d.value for d in details if d.label == "diff"] == ["no change"]
    out = await tool.execute(args, ctx)
    assert _text(out) == "No change: notes.txt already holds this content (2 lines)."
    assert isinstance(out.render, DiffRender)
    assert out.render.hunks == []
    assert _state(notes) == before


async def test_edits_that_cancel_out_say_no_change(tmp_path: Path) -> None:
    code = tmp_path / "a.py"
    code.write_text("x = 1\ny = 2\n")
    before = _aged(code)
    tool, ctx = EditTool(), ToolContext(cwd=tmp_path)
    args = tool.parse({"path": "a.py", "edits": [{"old_text": "x = 1", "new_text": "x = 1"}]})

    prompt, details = tool.describe(args, ctx)
    assert prompt == "Edit a.py (no change: the edits leave it as it is)?"
    assert [d.value for d in details if d.label == "diff"] == ["no change"]
    out = await tool.execute(args, ctx)
    assert _text(out) == "No change: the edits leave a.py as it was."
    assert isinstance(out.render, DiffRender)
    assert out.render.hunks == []
    assert _state(code) == before

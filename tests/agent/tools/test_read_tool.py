"""ReadTool: offsets, truncation with a continuation hint, refusals, and its render descriptors."""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from shard.agent.tools.base import ToolContext, ToolFailure, ToolOutput
from shard.agent.tools.read import MAX_BYTES, MAX_LINES, ReadTool
from shard.protocol.content import TextContent
from shard.protocol.render import CodeRender, KvRender

_HINT = re.compile(
    r"\n\n\[Showing lines (\d+)-(\d+) of (\d+) \((line|size) limit\)\. Use offset=(\d+) to continue\.\]$"
)


async def read(cwd: Path, **args: object) -> ToolOutput:
    tool = ReadTool()
    return await tool.execute(tool.parse(dict(args)), ToolContext(cwd=cwd))


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, TextContent)
    return out.content.text


async def test_small_file_is_returned_whole_with_a_code_descriptor(tmp_path: Path) -> None:
    """Covers: R11.0.16. A small file comes back verbatim; the result render is a `code` descriptor
    with the cwd-relative path, the language and the same body."""
    (tmp_path / "src").mkdir()
    body = "import os\n\nprint(os.getcwd())\n"
    (tmp_path / "src" / "app.py").write_text(body)

    out = await read(tmp_path, path="src/app.py")

    assert text_of(out) == body
    assert out.is_error is False
    assert isinstance(out.render, CodeRender)
    assert out.render.to_wire() == {"kind": "code", "path": "src/app.py", "lang": "python", "text": body}


async def test_code_descriptor_omits_lang_for_an_unknown_extension(tmp_path: Path) -> None:
    """Covers: R11.0.16. An unknown extension gives a code descriptor with no `lang` key at all."""
    (tmp_path / "notes.weird").write_text("hello\n")

    out = await read(tmp_path, path="notes.weird")

    assert out.render is not None
    assert out.render.to_wire() == {"kind": "code", "path": "notes.weird", "text": "hello\n"}


@pytest.mark.parametrize(
    ("name", "lang"),
    [("a.PY", "python"), ("b.ts", "typescript"), ("c.yml", "yaml"), ("d.rs", "rust"), ("e.sh", "bash")],
)
async def test_lang_follows_the_extension_case_insensitively(tmp_path: Path, name: str, lang: str) -> None:
    """Covers: R11.0.16. The code descriptor's language comes from the file suffix, ignoring case."""
    (tmp_path / name).write_text("x\n")
    out = await read(tmp_path, path=name)
    assert isinstance(out.render, CodeRender)
    assert out.render.lang == lang


async def test_offset_and_limit_select_lines_and_hint_the_next_offset(tmp_path: Path) -> None:
    """Checks offset (1-based) and limit: the model text ends with the continuation hint, the render
    body holds only the selected lines."""
    (tmp_path / "f.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))

    out = await read(tmp_path, path="f.txt", offset=3, limit=2)

    assert text_of(out) == (
        "line3\nline4\n\n\n[Showing lines 3-4 of 10 (line limit). Use offset=5 to continue.]"
    )
    assert isinstance(out.render, CodeRender)
    assert out.render.text == "line3\nline4\n"


async def test_reading_the_tail_has_no_hint(tmp_path: Path) -> None:
    """Checks that a read reaching the last line carries no continuation hint."""
    (tmp_path / "f.txt").write_text("a\nb\nc")
    out = await read(tmp_path, path="f.txt", offset=2)
    assert text_of(out) == "b\nc"


async def test_long_file_is_truncated_at_2000_lines(tmp_path: Path) -> None:
    """Covers: R2.3.3. A 2500-line file returns its first 2000 lines plus "Use offset=2001"."""
    lines = [f"{i}\n" for i in range(1, 2501)]
    (tmp_path / "long.txt").write_text("".join(lines))

    out = await read(tmp_path, path="long.txt")

    text = text_of(out)
    assert text.startswith("".join(lines[:MAX_LINES]))
    m = _HINT.search(text)
    assert m is not None
    assert m.groups() == ("1", "2000", "2500", "line", "2001")
    assert isinstance(out.render, CodeRender)
    assert out.render.text == "".join(lines[:MAX_LINES])


async def test_a_larger_limit_is_capped_at_2000_lines(tmp_path: Path) -> None:
    """Covers: R2.3.3. limit cannot lift the 2000-line cap."""
    (tmp_path / "long.txt").write_text("x\n" * 3000)
    out = await read(tmp_path, path="long.txt", limit=5000)
    assert isinstance(out.render, CodeRender)
    assert out.render.text.count("\n") == MAX_LINES
    assert "Use offset=2001 to continue" in text_of(out)


async def test_wide_file_is_truncated_at_50_kb(tmp_path: Path) -> None:
    """Covers: R2.3.3. 100 lines of 1000 bytes: only whole lines fitting in 50 KB are returned, and
    the hint names the size limit and the next offset."""
    line = "y" * 999 + "\n"
    (tmp_path / "wide.txt").write_text(line * 100)

    out = await read(tmp_path, path="wide.txt")

    assert isinstance(out.render, CodeRender)
    body = out.render.text
    assert len(body.encode()) <= MAX_BYTES
    assert body == line * (MAX_BYTES // len(line))
    m = _HINT.search(text_of(out))
    assert m is not None
    shown = MAX_BYTES // len(line)
    assert m.groups() == ("1", str(shown), "100", "size", str(shown + 1))


async def test_size_cap_counts_utf8_bytes_not_characters(tmp_path: Path) -> None:
    """Covers: R2.3.3. Multi-byte characters count by their UTF-8 size against the 50 KB cap."""
    line = "é" * 500 + "\n"  # 1001 bytes, 501 characters
    (tmp_path / "accents.txt").write_text(line * 100)

    out = await read(tmp_path, path="accents.txt")

    assert isinstance(out.render, CodeRender)
    assert len(out.render.text.encode()) <= MAX_BYTES
    assert out.render.text.count("\n") == MAX_BYTES // 1001


async def test_a_single_huge_line_is_still_truncated(tmp_path: Path) -> None:
    """Covers: R2.3.3. A minified file (one 200 KB line) must not come back inline in full: the
    result stays near the 50 KB cap the tool description promises."""
    (tmp_path / "bundle.min.js").write_text("a" * 200_000)

    out = await read(tmp_path, path="bundle.min.js")

    size = len(text_of(out).encode())
    assert size <= MAX_BYTES + 1024


async def test_lines_are_lf_terminated_like_grep_n_counts_them(tmp_path: Path) -> None:
    """Checks that offset/limit and the line counts use the file's real lines (LF-terminated, as
    grep -n and editors number them): a form feed or U+2028 inside a line must not split it, or
    an offset the model got from grep -n lands on the wrong text."""
    lines = ["int a;\n", "\f\n", "int b; /* \u2028 */\n", "int c;\n"]
    (tmp_path / "f.c").write_text("".join(lines))

    for number, line in enumerate(lines, start=1):
        out = await read(tmp_path, path="f.c", offset=number, limit=1)
        assert isinstance(out.render, CodeRender)
        assert out.render.text == line, number
    out = await read(tmp_path, path="f.c", limit=1)
    m = _HINT.search(text_of(out))
    assert m is not None
    assert m.group(3) == "4"


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab é\r", max_size=12), max_size=30),
    trailing_newline=st.booleans(),
    limit=st.integers(min_value=1, max_value=7),
)
def test_following_the_hints_reassembles_the_file(
    lines: list[str], trailing_newline: bool, limit: int
) -> None:
    """Covers: R2.3.3. Reading with a limit and following every "Use offset=N" hint returns each line
    exactly once: the bodies concatenate to the file, and only the last read lacks a hint."""
    content = "\n".join(lines) + ("\n" if trailing_newline and lines else "")

    async def walk(cwd: Path) -> str:
        parts: list[str] = []
        offset = 1
        for _ in range(len(content) + 2):
            out = await read(cwd, path="f.txt", offset=offset, limit=limit)
            assert isinstance(out.render, CodeRender)
            parts.append(out.render.text)
            assert out.render.text.count("\n") <= limit
            m = _HINT.search(text_of(out))
            if m is None:
                assert text_of(out) == out.render.text
                return "".join(parts)
            assert text_of(out) == out.render.text + m.group(0)
            assert int(m.group(1)) == offset
            offset = int(m.group(5))
        raise AssertionError("the hints never ended")

    with tempfile.TemporaryDirectory() as d:
        cwd = Path(d)
        (cwd / "f.txt").write_bytes(content.encode())
        assert asyncio.run(walk(cwd)) == content


async def test_empty_file_reads_as_empty_text(tmp_path: Path) -> None:
    """Checks that an empty file is not an error and yields empty text with no hint."""
    (tmp_path / "empty.txt").write_text("")
    out = await read(tmp_path, path="empty.txt")
    assert text_of(out) == ""
    assert isinstance(out.render, CodeRender)
    assert out.render.text == ""


@pytest.mark.parametrize("offset", [4, 5, 1000])
async def test_offset_past_the_end_is_a_tool_failure(tmp_path: Path, offset: int) -> None:
    """Checks that an offset beyond the last line fails with a message naming the offset and size."""
    (tmp_path / "f.txt").write_text("1\n2\n3\n")
    with pytest.raises(ToolFailure, match=rf"offset {offset} is past the end of f\.txt \(3 lines\)"):
        await read(tmp_path, path="f.txt", offset=offset)


async def test_offset_on_the_last_line_is_fine(tmp_path: Path) -> None:
    """Checks the boundary: offset equal to the line count reads the last line."""
    (tmp_path / "f.txt").write_text("1\n2\n3\n")
    out = await read(tmp_path, path="f.txt", offset=3)
    assert text_of(out) == "3\n"


@pytest.mark.parametrize("payload", [b"\x00", b"abc\x00def\n", b"\x7fELF\x02\x01\x01\x00\x00"])
async def test_binary_files_are_refused(tmp_path: Path, payload: bytes) -> None:
    """Checks that a file with a NUL byte in its head is refused as binary, naming its size."""
    (tmp_path / "blob.bin").write_bytes(payload)
    with pytest.raises(ToolFailure, match=rf"blob\.bin is a binary file \({len(payload)} bytes\)"):
        await read(tmp_path, path="blob.bin")


async def test_directories_are_refused_with_a_pointer_to_ls(tmp_path: Path) -> None:
    """Checks that reading a directory fails and tells the model to use ls."""
    (tmp_path / "pkg").mkdir()
    with pytest.raises(ToolFailure, match="pkg is a directory; use the ls tool"):
        await read(tmp_path, path="pkg")


async def test_missing_file_is_a_tool_failure(tmp_path: Path) -> None:
    """Checks the message for a missing file names the cwd-relative path."""
    with pytest.raises(ToolFailure, match=r"^nope/x\.txt: no such file$"):
        await read(tmp_path, path="nope/x.txt")


async def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    """Checks that undecodable bytes become U+FFFD instead of failing the read."""
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    out = await read(tmp_path, path="latin1.txt")
    assert text_of(out) == "caf\ufffd\n"


async def test_absolute_path_outside_cwd_is_displayed_absolute(tmp_path: Path) -> None:
    """Covers: R11.0.16. A file outside the cwd keeps its absolute path in the code header."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    other = tmp_path / "elsewhere.md"
    other.write_text("# hi\n")

    out = await read(cwd, path=str(other))

    assert isinstance(out.render, CodeRender)
    assert out.render.path == str(other)
    assert out.render.lang == "markdown"


@pytest.mark.parametrize(
    "args", [{"path": "f", "offset": 0}, {"path": "f", "limit": 0}, {"path": "f", "x": 1}, {}]
)
def test_invalid_arguments_are_rejected_by_parse(args: dict[str, object]) -> None:
    """Checks the params model: offset/limit >= 1, path required, unknown arguments forbidden."""
    with pytest.raises(ValidationError):
        ReadTool().parse(args)


def test_read_is_read_only_and_touches_the_normalized_path(tmp_path: Path) -> None:
    """Covers: R9.4.11. read is read-only; the gate sees the normalized absolute path it opens."""
    tool = ReadTool()
    assert tool.read_only is True
    args = tool.parse({"path": "a/../b/./c.txt"})
    assert tool.touched_paths(args, ToolContext(cwd=tmp_path)) == [tmp_path / "b" / "c.txt"]


def test_start_render_lists_path_offset_and_limit(tmp_path: Path) -> None:
    """Checks the start-time kv descriptor: path always, offset/limit only when given."""
    tool = ReadTool()
    ctx = ToolContext(cwd=tmp_path)
    plain = tool.start_render(tool.parse({"path": "x.py"}), ctx)
    full = tool.start_render(tool.parse({"path": "x.py", "offset": 7, "limit": 3}), ctx)
    assert isinstance(plain, KvRender)
    assert plain.to_wire() == {"kind": "kv", "pairs": [{"k": "path", "v": "x.py"}]}
    assert full.to_wire() == {
        "kind": "kv",
        "pairs": [{"k": "path", "v": "x.py"}, {"k": "offset", "v": "7"}, {"k": "limit", "v": "3"}],
    }


def test_spec_is_a_closed_json_schema_from_the_params_model() -> None:
    """Checks spec(): name, description, and a schema with path required and no extra properties."""
    spec = ReadTool().spec()
    assert spec.name == "read"
    assert "2000 lines" in spec.description
    schema = spec.parameters
    assert schema["type"] == "object"
    assert "title" not in schema
    assert schema["required"] == ["path"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"path", "offset", "limit"}

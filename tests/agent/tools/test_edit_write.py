"""edit and write: exact single-occurrence edits, tolerant fallback, all-or-none, byte-exact CRLF/BOM
and mode preservation, atomic replacement, and the diff renders."""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.tools import files
from shard.agent.tools.base import ToolContext, ToolFailure, ToolOutput
from shard.agent.tools.diff import hunks
from shard.agent.tools.edit import EditTool
from shard.agent.tools.write import WriteTool
from shard.protocol.content import TextContent
from shard.protocol.render import DiffRender

BOM = b"\xef\xbb\xbf"


async def edit(cwd: Path, path: str, *pairs: tuple[str, str]) -> ToolOutput:
    tool = EditTool()
    args = tool.parse({"path": path, "edits": [{"old_text": o, "new_text": n} for o, n in pairs]})
    return await tool.execute(args, ToolContext(cwd=cwd))


async def write(cwd: Path, path: str, content: str) -> ToolOutput:
    tool = WriteTool()
    return await tool.execute(tool.parse({"path": path, "content": content}), ToolContext(cwd=cwd))


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, TextContent)
    return out.content.text


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if "shard-tmp" in p.name)


def assert_only_span_changed(before: bytes, after: bytes, start: int, end: int, replacement: bytes) -> None:
    """Every byte outside before[start:end] is identical, and the span became ``replacement``."""
    assert after[:start] == before[:start]
    assert after[start + len(replacement) :] == before[end:]
    assert after[start : start + len(replacement)] == replacement


# --- edit: exact ---------------------------------------------------------------------------------


async def test_exact_edit_replaces_the_single_occurrence(tmp_path: Path) -> None:
    """An old_text occurring once is replaced; nothing else in the file changes."""
    f = tmp_path / "a.py"
    before = b"def f(x):\n    return x + 1\n\nprint(f(2))\n"
    f.write_bytes(before)
    out = await edit(tmp_path, "a.py", ("return x + 1", "return x + 2"))
    assert f.read_bytes() == before.replace(b"x + 1", b"x + 2")
    assert not out.is_error
    assert "a.py" in text_of(out)
    assert "whitespace" not in text_of(out)


async def test_several_occurrences_fail_naming_the_lines(tmp_path: Path) -> None:
    """old_text found more than once is an error naming the count and the lines; the file is untouched."""
    f = tmp_path / "a.txt"
    before = b"foo\nbar\nfoo\nbaz\nfoo\n"
    f.write_bytes(before)
    with pytest.raises(ToolFailure, match=r"3 times.*lines 1, 3, 5"):
        await edit(tmp_path, "a.txt", ("foo", "x"))
    assert f.read_bytes() == before


async def test_zero_occurrences_fail(tmp_path: Path) -> None:
    """old_text not found (even tolerantly) is an error that says so; the file is untouched."""
    f = tmp_path / "a.txt"
    f.write_bytes(b"alpha\n")
    with pytest.raises(ToolFailure, match="not found"):
        await edit(tmp_path, "a.txt", ("beta", "x"))
    assert f.read_bytes() == b"alpha\n"


async def test_error_names_the_failing_edit_among_several(tmp_path: Path) -> None:
    """With several edits, the message says which one failed ("edit 2 of 3")."""
    (tmp_path / "a.txt").write_bytes(b"one\ntwo\nthree\n")
    with pytest.raises(ToolFailure, match="edit 2 of 3"):
        await edit(tmp_path, "a.txt", ("one", "1"), ("four", "4"), ("three", "3"))


async def test_several_edits_are_all_or_none(tmp_path: Path) -> None:
    """If a later edit fails, the file stays byte-identical (the earlier ones are not written)."""
    f = tmp_path / "a.txt"
    before = b"one\ntwo\nthree\n"
    f.write_bytes(before)
    with pytest.raises(ToolFailure):
        await edit(tmp_path, "a.txt", ("one", "1"), ("missing", "x"))
    assert f.read_bytes() == before
    assert leftovers(tmp_path) == []


async def test_edits_apply_in_order_to_the_evolving_text(tmp_path: Path) -> None:
    """Each edit sees the text the previous one left: a later edit can target an earlier replacement."""
    f = tmp_path / "a.txt"
    f.write_bytes(b"abc\n")
    await edit(tmp_path, "a.txt", ("abc", "xyz"), ("xyz", "done"))
    assert f.read_bytes() == b"done\n"


async def test_a_later_edit_made_ambiguous_by_an_earlier_one_fails_whole(tmp_path: Path) -> None:
    """An earlier replacement that duplicates a later edit's old_text makes the later one ambiguous:
    error, and nothing written."""
    f = tmp_path / "a.txt"
    f.write_bytes(b"cat\ndog\n")
    with pytest.raises(ToolFailure, match="edit 2 of 2"):
        await edit(tmp_path, "a.txt", ("cat", "dog"), ("dog", "bird"))
    assert f.read_bytes() == b"cat\ndog\n"


async def test_missing_and_binary_files_are_tool_failures(tmp_path: Path) -> None:
    """Editing a missing file, a directory or a binary file is an explained failure."""
    with pytest.raises(ToolFailure, match="no such file"):
        await edit(tmp_path, "nope.txt", ("a", "b"))
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolFailure, match="directory"):
        await edit(tmp_path, "d", ("a", "b"))
    (tmp_path / "b.bin").write_bytes(b"a\0b")
    with pytest.raises(ToolFailure, match="binary"):
        await edit(tmp_path, "b.bin", ("a", "b"))


# --- edit: tolerant --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "old", "new", "span"),
    [
        # extra spaces inside the line
        (b"top\ndef  f( x ):\n    pass\nend\n", "def f( x ):", "def g(x):", b"def  f( x ):"),
        # tabs in the file, spaces in old_text (indentation brought along)
        (
            b"x\n\tif a:\n\t\tpass\ny\n",
            "    if a:\n        pass",
            "    if b:\n        pass",
            b"\tif a:\n\t\tpass",
        ),
        # curly quotes in the file, straight ones in old_text
        (
            "a = 1\nb = \u201chi\u2019s\u201d\nc = 2\n".encode(),
            'b = "hi\'s"',
            "b = 'yo'",
            "b = \u201chi\u2019s\u201d".encode(),
        ),
        # trailing spaces in the file
        (b"head\none   \ntwo\t\ntail\n", "one\ntwo", "ONE\nTWO", b"one   \ntwo"),
        # trailing spaces in old_text
        (b"keep  \nx = 1\nkeep2  \n", "x = 1  ", "x = 2", b"x = 1"),
        # no-break space in the file
        ("p\nif\u00a0x:\nq\n".encode(), "if x:", "if y:", "if\u00a0x:".encode()),
    ],
)
async def test_tolerant_match_rewrites_only_the_located_span(
    tmp_path: Path, before: bytes, old: str, new: str, span: bytes
) -> None:
    """When old_text differs only in whitespace or quote style, the one place it matches is replaced;
    every byte outside that span is identical, and the result says the edit matched tolerantly."""
    f = tmp_path / "a.txt"
    f.write_bytes(before)
    out = await edit(tmp_path, "a.txt", (old, new))
    after = f.read_bytes()
    start = before.index(span)
    assert_only_span_changed(before, after, start, start + len(span), new.encode())
    assert "Edit 1 matched after ignoring whitespace/quote differences" in text_of(out)


async def test_tolerant_match_that_is_ambiguous_fails(tmp_path: Path) -> None:
    """Two places matching once whitespace is ignored is an error naming both lines; no write."""
    f = tmp_path / "a.txt"
    before = b"a  b\nx\na\tb\n"
    f.write_bytes(before)
    with pytest.raises(ToolFailure, match=r"2 times.*whitespace.*lines 1, 3"):
        await edit(tmp_path, "a.txt", ("a b", "c"))
    assert f.read_bytes() == before


async def test_tolerant_match_does_not_ignore_letters(tmp_path: Path) -> None:
    """Tolerance covers whitespace and quotes only: a different word is still not found."""
    (tmp_path / "a.txt").write_bytes(b"def  f(x):\n")
    with pytest.raises(ToolFailure, match="not found"):
        await edit(tmp_path, "a.txt", ("def g(x):", "z"))


# --- edit: line endings, BOM, mode, symlinks ---------------------------------------------------------


async def test_crlf_file_edited_with_lf_text_keeps_crlf_everywhere(tmp_path: Path) -> None:
    """A CRLF file edited with LF old/new text matches exactly and writes CRLF for the new lines too;
    the rest of the file is byte-identical."""
    f = tmp_path / "w.txt"
    before = b"one\r\ntwo\r\nthree\r\nfour\r\n"
    f.write_bytes(before)
    out = await edit(tmp_path, "w.txt", ("two\nthree", "2\n2.5\n3"))
    after = f.read_bytes()
    assert after == b"one\r\n2\r\n2.5\r\n3\r\nfour\r\n"
    assert b"\n" not in after.replace(b"\r\n", b"")
    assert "whitespace" not in text_of(out)


async def test_crlf_file_edited_with_crlf_text_is_not_doubled(tmp_path: Path) -> None:
    """old/new text that already uses CRLF is not turned into CR CR LF."""
    f = tmp_path / "w.txt"
    f.write_bytes(b"a\r\nb\r\nc\r\n")
    await edit(tmp_path, "w.txt", ("a\r\nb", "x\r\ny"))
    assert f.read_bytes() == b"x\r\ny\r\nc\r\n"


async def test_bom_is_kept(tmp_path: Path) -> None:
    """A UTF-8 BOM stays at the start of the file, and old_text need not include it."""
    f = tmp_path / "b.txt"
    f.write_bytes(BOM + b"first\nsecond\n")
    await edit(tmp_path, "b.txt", ("first", "1st"))
    assert f.read_bytes() == BOM + b"1st\nsecond\n"


async def test_bom_and_crlf_together_are_kept(tmp_path: Path) -> None:
    """BOM and CRLF survive the same edit."""
    f = tmp_path / "b.txt"
    f.write_bytes(BOM + b"x = 1\r\ny = 2\r\n")
    await edit(tmp_path, "b.txt", ("y = 2", "y = 3\nz = 4"))
    assert f.read_bytes() == BOM + b"x = 1\r\ny = 3\r\nz = 4\r\n"


async def test_edit_keeps_the_file_mode(tmp_path: Path) -> None:
    """An executable script stays executable (permission bits kept) and leaves no temp file."""
    f = tmp_path / "run.sh"
    f.write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(f, 0o751)
    await edit(tmp_path, "run.sh", ("hi", "ho"))
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert leftovers(tmp_path) == []


async def test_edit_through_a_symlink_changes_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    """Editing a path that is a symlink (dotfiles, shared configs) changes the file it points to; the
    link itself stays a link."""
    target = tmp_path / "real.txt"
    target.write_bytes(b"value = 1\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    await edit(tmp_path, "link.txt", ("value = 1", "value = 2"))
    assert link.is_symlink()
    assert target.read_bytes() == b"value = 2\n"


async def test_describe_shows_the_diff_and_fails_for_an_edit_that_cannot_apply(tmp_path: Path) -> None:
    """describe() (the permission prompt) names the file and shows the change; an edit that cannot
    apply fails there, before anyone is asked."""
    (tmp_path / "a.txt").write_bytes(b"alpha\nbeta\n")
    tool = EditTool()
    ctx = ToolContext(cwd=tmp_path)
    prompt, details = tool.describe(
        tool.parse({"path": "a.txt", "edits": [{"old_text": "beta", "new_text": "gamma"}]}), ctx
    )
    assert prompt == "Edit a.txt (1 change)?"
    diff = next(d.value for d in details if d.label == "diff")
    assert "-beta" in diff
    assert "+gamma" in diff
    with pytest.raises(ToolFailure):
        tool.describe(tool.parse({"path": "a.txt", "edits": [{"old_text": "zeta", "new_text": "x"}]}), ctx)
    assert (
        tool.start_render(
            tool.parse({"path": "a.txt", "edits": [{"old_text": "zeta", "new_text": "x"}]}), ctx
        )
        is None
    )


# --- edit: renders -----------------------------------------------------------------------------------


async def test_edit_render_hunks_match_the_change(tmp_path: Path) -> None:
    """The result render is a diff whose hunk header numbers and -/+/space lines describe exactly the
    change made; the summary counts the added and removed lines."""
    lines = [f"line {i}" for i in range(1, 21)]
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n")
    out = await edit(tmp_path, "a.txt", ("line 10\nline 11", "ten\neleven\neleven and a half"))
    assert isinstance(out.render, DiffRender)
    assert out.render.path == "a.txt"
    [hunk] = out.render.hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (7, 8, 7, 9)
    assert hunk.lines == [
        " line 7",
        " line 8",
        " line 9",
        "-line 10",
        "-line 11",
        "+ten",
        "+eleven",
        "+eleven and a half",
        " line 12",
        " line 13",
        " line 14",
    ]
    assert "(+3 -2 lines)" in text_of(out)


async def test_crlf_edit_render_has_no_carriage_returns(tmp_path: Path) -> None:
    """Renders show text lines: a CRLF file's diff carries no stray \\r."""
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    out = await edit(tmp_path, "w.txt", ("b", "B"))
    assert isinstance(out.render, DiffRender)
    assert all("\r" not in line for h in out.render.hunks for line in h.lines)
    assert [line for h in out.render.hunks for line in h.lines if line[0] in "+-"] == ["-b", "+B"]


# --- edit: property ------------------------------------------------------------------------------------

_ALPHABET = st.sampled_from(list("ab xy\t\n\"'\u201c\u00e9;{}"))


@st.composite
def _file_and_unique_span(draw: st.DrawFn) -> tuple[str, int, int, str]:
    text = draw(st.text(alphabet=_ALPHABET, min_size=1, max_size=60))
    start = draw(st.integers(min_value=0, max_value=len(text) - 1))
    end = draw(st.integers(min_value=start + 1, max_value=len(text)))
    old = text[start:end]
    first = text.find(old)
    if first != start or text.find(old, first + 1) >= 0:  # not unique: widen to the whole text
        start, end = 0, len(text)
    new = draw(st.text(alphabet=_ALPHABET, max_size=20))
    return text, start, end, new


@settings(max_examples=150, deadline=None)
@given(case=_file_and_unique_span())
def test_exact_edit_changes_exactly_that_span(case: tuple[str, int, int, str]) -> None:
    """For any file content and any substring occurring once, the edit replaces exactly that span and
    leaves every other byte as it was."""
    text, start, end, new = case
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "f.txt").write_bytes(text.encode())
        asyncio.run(edit(cwd, "f.txt", (text[start:end], new)))
        assert (cwd / "f.txt").read_bytes() == (text[:start] + new + text[end:]).encode()


# --- write -------------------------------------------------------------------------------------------


async def test_write_creates_parents_and_the_file(tmp_path: Path) -> None:
    """write creates missing parent folders and the file with exactly the content given."""
    out = await write(tmp_path, "deep/er/new.txt", "hello\nworld\n")
    f = tmp_path / "deep" / "er" / "new.txt"
    assert f.read_bytes() == b"hello\nworld\n"
    assert text_of(out).startswith("Created deep/er/new.txt (2 lines")
    assert leftovers(f.parent) == []


async def test_write_new_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    """A file created by write has the permissions any program would create it with (0666 minus the
    umask), not the private 0600 of a temporary file."""
    umask = os.umask(0o022)
    try:
        await write(tmp_path, "new.txt", "x\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


async def test_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    """Replacing a file keeps its permission bits and leaves no temp file behind."""
    f = tmp_path / "s.sh"
    f.write_bytes(b"old\n")
    os.chmod(f, 0o755)
    out = await write(tmp_path, "s.sh", "new\ncontent\n")
    assert f.read_bytes() == b"new\ncontent\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o755
    assert text_of(out).startswith("Replaced s.sh")
    assert leftovers(tmp_path) == []


async def test_write_keeps_the_mode_of_a_non_utf8_file(tmp_path: Path) -> None:
    """An existing file that is not UTF-8 text (here Latin-1) is replaced but keeps its permission
    bits, like any other existing file."""
    f = tmp_path / "legacy.sh"
    f.write_bytes(b"echo caf\xe9\n")
    os.chmod(f, 0o755)
    await write(tmp_path, "legacy.sh", "echo cafe\n")
    assert f.read_bytes() == b"echo cafe\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o755


async def test_write_keeps_crlf_and_bom_of_an_existing_file(tmp_path: Path) -> None:
    """An existing CRLF file with a BOM stays CRLF with a BOM when rewritten with LF content."""
    f = tmp_path / "w.txt"
    f.write_bytes(BOM + b"old\r\nlines\r\n")
    await write(tmp_path, "w.txt", "new\nlines\nhere\n")
    assert f.read_bytes() == BOM + b"new\r\nlines\r\nhere\r\n"


async def test_write_with_crlf_content_is_not_doubled(tmp_path: Path) -> None:
    """Content that already has CRLF line endings is written as given (no CR CR LF)."""
    f = tmp_path / "w.txt"
    f.write_bytes(b"a\r\nb\r\n")
    await write(tmp_path, "w.txt", "x\r\ny\r\n")
    assert f.read_bytes() == b"x\r\ny\r\n"


async def test_write_to_a_directory_fails(tmp_path: Path) -> None:
    """A path that is a directory is refused with an explanation."""
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolFailure, match="directory"):
        await write(tmp_path, "d", "x")


async def test_failed_replace_leaves_the_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the final rename fails (disk full, permissions), the original file is intact, no temp file is
    left, and the tool reports a failure instead of crashing."""
    f = tmp_path / "keep.txt"
    f.write_bytes(b"precious\n")

    def boom(*_: Any, **__: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", boom)
    with pytest.raises(ToolFailure, match="No space left"):
        await write(tmp_path, "keep.txt", "overwritten\n")
    with pytest.raises(ToolFailure, match="No space left"):
        await edit(tmp_path, "keep.txt", ("precious", "gone"))
    monkeypatch.undo()
    assert f.read_bytes() == b"precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


async def test_failure_while_writing_the_temp_file_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure before the rename (fsync here) also removes the temp file; the target is untouched
    and a new file is not created."""
    (tmp_path / "keep.txt").write_bytes(b"precious\n")

    def boom(_: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files.os, "fsync", boom)
    with pytest.raises(ToolFailure, match="Input/output error"):
        await write(tmp_path, "keep.txt", "overwritten\n")
    with pytest.raises(ToolFailure):
        await write(tmp_path, "fresh.txt", "x\n")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
    assert (tmp_path / "keep.txt").read_bytes() == b"precious\n"


async def test_write_render_is_a_diff_against_the_old_content(tmp_path: Path) -> None:
    """The result render of a replacement shows the old lines removed and the new ones added; a new
    file's render is all additions starting at line 1."""
    (tmp_path / "a.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    out = await write(tmp_path, "a.txt", "a\nB\nc\n")
    assert isinstance(out.render, DiffRender)
    [hunk] = out.render.hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (1, 3, 1, 3)
    assert hunk.lines == [" a", "-b", "+B", " c"]

    out = await write(tmp_path, "new.txt", "x\ny\n")
    assert isinstance(out.render, DiffRender)
    assert [(h.old_start, h.old_lines, h.new_start, h.new_lines, h.lines) for h in out.render.hunks] == [
        (0, 0, 1, 2, ["+x", "+y"])
    ]


def test_write_describe_says_create_or_replace(tmp_path: Path) -> None:
    """describe() says Create for a new file and Replace for an existing one, with the line count and
    a diff detail."""
    tool = WriteTool()
    ctx = ToolContext(cwd=tmp_path)
    prompt, details = tool.describe(tool.parse({"path": "n.txt", "content": "a\nb"}), ctx)
    assert prompt == "Create n.txt (2 lines)?"
    (tmp_path / "n.txt").write_text("old\n")
    prompt, details = tool.describe(tool.parse({"path": "n.txt", "content": "a\n"}), ctx)
    assert prompt == "Replace n.txt (1 lines)?"
    diff = next(d.value for d in details if d.label == "diff")
    assert "-old" in diff
    assert "+a" in diff
    assert hunks("old\n", "a\n")[0].lines == ["-old", "+a"]

"""diff.hunks: unified-diff hunks (old_start/old_lines/new_start/new_lines and ' '/'-'/'+' lines)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.tools.diff import CONTEXT, diff_render, hunks, unified_text
from shard.protocol.render import Hunk

TEN = "".join(f"l{i}\n" for i in range(1, 11))


def shape(old: str, new: str) -> list[tuple[int, int, int, int, list[str]]]:
    return [(h.old_start, h.old_lines, h.new_start, h.new_lines, h.lines) for h in hunks(old, new)]


def test_no_change_has_no_hunks() -> None:
    """Identical texts (empty or not) give no hunk."""
    assert hunks("", "") == []
    assert hunks(TEN, TEN) == []


def test_new_file_is_one_insertion_hunk() -> None:
    """From an empty file: one hunk starting at old line 0 with 0 old lines, all lines added."""
    assert shape("", "a\nb\n") == [(0, 0, 1, 2, ["+a", "+b"])]


def test_emptied_file_is_one_deletion_hunk() -> None:
    """To an empty file: one hunk removing every line, new range 0,0."""
    assert shape("a\nb\n", "") == [(1, 2, 0, 0, ["-a", "-b"])]


def test_insert_in_the_middle_has_three_lines_of_context() -> None:
    """An inserted line gets 3 context lines on each side; counts include the context."""
    new = TEN.replace("l5\n", "l5\nNEW\n")
    assert shape(TEN, new) == [(3, 6, 3, 7, [" l3", " l4", " l5", "+NEW", " l6", " l7", " l8"])]


def test_delete_near_the_start_clips_the_context() -> None:
    """Deleting line 2: the leading context is clipped at the file start."""
    new = TEN.replace("l2\n", "")
    assert shape(TEN, new) == [(1, 5, 1, 4, [" l1", "-l2", " l3", " l4", " l5"])]


def test_replace_at_the_end_clips_the_context() -> None:
    """Replacing the last line: trailing context is clipped at the file end."""
    new = TEN.replace("l10\n", "ten\n")
    assert shape(TEN, new) == [(7, 4, 7, 4, [" l7", " l8", " l9", "-l10", "+ten"])]


def test_insert_at_the_start_and_at_the_end() -> None:
    """Insertions before the first line and after the last one."""
    assert shape("a\nb\n", "x\na\nb\n") == [(1, 2, 1, 3, ["+x", " a", " b"])]
    assert shape("a\nb\n", "a\nb\nz\n") == [(1, 2, 1, 3, [" a", " b", "+z"])]


def test_distant_changes_give_separate_hunks_and_close_ones_merge() -> None:
    """Changes more than 2*CONTEXT lines apart are separate hunks; closer ones share one hunk."""
    old = "".join(f"{i}\n" for i in range(1, 41))
    far = old.replace("5\n", "five\n", 1).replace("35\n", "thirty-five\n")
    assert [h[:4] for h in shape(old, far)] == [(2, 7, 2, 7), (32, 7, 32, 7)]
    near = old.replace("5\n", "five\n", 1).replace("\n11\n", "\neleven\n")
    assert [h[:4] for h in shape(old, near)] == [(2, 13, 2, 13)]
    assert CONTEXT == 3


def test_lines_are_split_on_newlines_only() -> None:
    """Hunk numbers count the file's lines (split on \\n, as diff and the read tool do): a form feed or
    a Unicode line separator inside a line does not start a new line, and is kept in the line text."""
    for sep in ("\x0c", "\u2028", "\x1c", "\x0b"):
        old = f"a\n{sep}b\nc\n"
        new = f"a\n{sep}b\nC\n"
        assert shape(old, new) == [(1, 3, 1, 3, [" a", f" {sep}b", "-c", "+C"])], repr(sep)


def test_diff_render_and_unified_text_describe_the_same_change() -> None:
    """The render carries the path and hunks; the text form has the usual a/ b/ headers and @@ line."""
    render = diff_render("src/x.py", "a\nb\n", "a\nB\n")
    assert render.path == "src/x.py"
    assert render.hunks == [
        Hunk(old_start=1, old_lines=2, new_start=1, new_lines=2, lines=[" a", "-b", "+B"])
    ]
    assert render.to_wire()["kind"] == "diff"
    text = unified_text("src/x.py", "a\nb\n", "a\nB\n")
    assert text.split("\n") == ["--- a/src/x.py", "+++ b/src/x.py", "@@ -1,2 +1,2 @@", " a", "-b", "+B"]


# --- properties ------------------------------------------------------------------------------------

_LINES = st.lists(st.sampled_from(["a", "b", "c", "", "x y", "dup", "dup"]), max_size=25)


def _apply(old: list[str], found: list[Hunk]) -> list[str]:
    """Apply hunks to a list of lines, checking each hunk's header against its body."""
    out: list[str] = []
    at = 0  # next old line (0-based) not yet copied
    shift = 0
    for h in found:
        assert h.old_lines == sum(1 for line in h.lines if line[0] in " -")
        assert h.new_lines == sum(1 for line in h.lines if line[0] in " +")
        assert all(line[:1] in (" ", "-", "+") for line in h.lines)
        start = h.old_start - 1 if h.old_lines else h.old_start
        assert start >= at
        out += old[at:start]
        expected_new_start = start + shift + (1 if h.new_lines else 0)
        assert h.new_start == expected_new_start
        assert [line[1:] for line in h.lines if line[0] in " -"] == old[start : start + h.old_lines]
        out += [line[1:] for line in h.lines if line[0] in " +"]
        at = start + h.old_lines
        shift += h.new_lines - h.old_lines
    return out + old[at:]


@settings(max_examples=200, deadline=None)
@given(old=_LINES, new=_LINES)
def test_hunks_rebuild_the_new_text(old: list[str], new: list[str]) -> None:
    """For any two texts, the hunks' headers agree with their bodies and applying them to the old lines
    gives exactly the new lines."""
    old_text = "".join(f"{line}\n" for line in old)
    new_text = "".join(f"{line}\n" for line in new)
    found = hunks(old_text, new_text)
    assert _apply(old, found) == new
    assert (found == []) == (old == new)


@settings(max_examples=40, deadline=None)
@given(old=_LINES, new=_LINES)
def test_gnu_patch_accepts_the_hunks(old: list[str], new: list[str]) -> None:
    """GNU patch, applying the hunks written as a unified diff, turns the old file into the new one:
    the header numbers are what a standard tool expects."""
    old_text = "".join(f"{line}\n" for line in old)
    new_text = "".join(f"{line}\n" for line in new)
    body = ["--- a/f", "+++ b/f"]
    for h in hunks(old_text, new_text):
        body.append(f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@")
        body += h.lines
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "f"
        f.write_text(old_text)
        if len(body) > 2:
            run = subprocess.run(
                ["patch", "--silent", "--force", "--no-backup-if-mismatch", str(f)],
                input="\n".join(body) + "\n",
                capture_output=True,
                text=True,
                check=False,
            )
            assert run.returncode == 0, run.stdout + run.stderr
        assert f.read_text() == new_text


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_trailing_context_never_exceeds_three_lines(n: int) -> None:
    """Whatever the file length after a change, at most 3 context lines follow the last change."""
    old = "x\n" + "".join(f"{i}\n" for i in range(n))
    [h] = hunks(old, "y\n" + old[2:])
    trailing = len(h.lines) - 2
    assert trailing == min(n, CONTEXT)

"""LsTool: sorted entries, directory markers, dotfiles, the entry cap and its path_list render."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.tools.base import ToolContext, ToolFailure, ToolOutput
from shard.agent.tools.ls import MAX_ENTRIES, LsTool
from shard.protocol.content import TextContent
from shard.protocol.render import KvRender, PathListRender


async def ls(cwd: Path, **args: object) -> ToolOutput:
    tool = LsTool()
    return await tool.execute(tool.parse(dict(args)), ToolContext(cwd=cwd))


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, TextContent)
    return out.content.text


def render_of(out: ToolOutput) -> list[tuple[str, str]]:
    assert isinstance(out.render, PathListRender)
    return [(p.path, p.kind) for p in out.render.paths]


async def test_entries_are_sorted_dirs_marked_and_dotfiles_included(tmp_path: Path) -> None:
    """Covers: R11.0.15. Entries sorted by name (case-insensitively), directories end with "/",
    dotfiles are listed, and the result render is a flat path_list with file/dir kinds."""
    for name in ("b.txt", "A.md", ".hidden"):
        (tmp_path / name).write_text("x")
    for name in ("sub", "a_dir", ".git"):
        (tmp_path / name).mkdir()

    out = await ls(tmp_path)

    assert text_of(out).split("\n") == [".git/", ".hidden", "A.md", "a_dir/", "b.txt", "sub/"]
    assert render_of(out) == [
        (".git", "dir"),
        (".hidden", "file"),
        ("A.md", "file"),
        ("a_dir", "dir"),
        ("b.txt", "file"),
        ("sub", "dir"),
    ]
    assert out.render is not None
    assert out.render.to_wire()["kind"] == "path_list"


async def test_names_differing_only_in_case_have_a_stable_order(tmp_path: Path) -> None:
    """Checks the tie-break: names equal ignoring case are ordered by their exact spelling."""
    for name in ("b", "a", "B", "A"):
        (tmp_path / name).write_text("")
    out = await ls(tmp_path)
    assert text_of(out).split("\n") == ["A", "a", "B", "b"]


async def test_subdirectory_render_paths_are_relative_to_the_cwd(tmp_path: Path) -> None:
    """Covers: R11.0.15. Listing a subdirectory: the text shows bare names, the path_list shows
    cwd-relative paths so a client can open them."""
    (tmp_path / "pkg" / "inner").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text("")

    out = await ls(tmp_path, path="pkg/")

    assert text_of(out) == "inner/\nmod.py"
    assert render_of(out) == [("pkg/inner", "dir"), ("pkg/mod.py", "file")]


async def test_directory_outside_the_cwd_renders_absolute_paths(tmp_path: Path) -> None:
    """Covers: R11.0.15. A directory outside the cwd yields absolute paths in the path_list."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "f").write_text("")

    out = await ls(cwd, path=str(other))

    assert render_of(out) == [(f"{other}/f", "file")]


async def test_symlink_to_a_directory_is_listed_as_a_directory(tmp_path: Path) -> None:
    """Checks that a link to a directory is marked like a directory (is_dir follows links)."""
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    out = await ls(tmp_path)
    assert text_of(out) == "link/\nreal/"


async def test_empty_directory_says_so(tmp_path: Path) -> None:
    """Covers: R11.0.15. An empty directory: an explanatory text and an empty path_list."""
    out = await ls(tmp_path)
    assert text_of(out) == "(empty directory)"
    assert render_of(out) == []


async def test_limit_shows_the_first_entries_and_counts_the_rest(tmp_path: Path) -> None:
    """Checks limit: the first N sorted entries, then a note with how many were left out."""
    for i in range(7):
        (tmp_path / f"f{i}").write_text("")

    out = await ls(tmp_path, limit=3)

    assert text_of(out) == "f0\nf1\nf2\n\n[4 more entries not shown; 7 in all.]"
    assert render_of(out) == [("f0", "file"), ("f1", "file"), ("f2", "file")]


async def test_at_most_500_entries_even_with_a_larger_limit(tmp_path: Path) -> None:
    """Covers: R2.3.3. The 500-entry cap holds by default and cannot be lifted by limit."""
    for i in range(MAX_ENTRIES + 5):
        (tmp_path / f"e{i:04d}").write_text("")

    for out in (await ls(tmp_path), await ls(tmp_path, limit=10_000)):
        lines = text_of(out).split("\n")
        assert lines[:MAX_ENTRIES] == [f"e{i:04d}" for i in range(MAX_ENTRIES)]
        assert lines[MAX_ENTRIES:] == ["", "[5 more entries not shown; 505 in all.]"]
        assert len(render_of(out)) == MAX_ENTRIES


async def test_exactly_at_the_limit_has_no_note(tmp_path: Path) -> None:
    """Checks the boundary: as many entries as the limit gives no "more entries" note."""
    for i in range(3):
        (tmp_path / f"f{i}").write_text("")
    out = await ls(tmp_path, limit=3)
    assert text_of(out) == "f0\nf1\nf2"


async def test_missing_directory_is_a_tool_failure(tmp_path: Path) -> None:
    """Checks the message for a missing directory."""
    with pytest.raises(ToolFailure, match=r"^gone: no such directory$"):
        await ls(tmp_path, path="gone")


async def test_a_file_is_refused_with_a_pointer_to_read(tmp_path: Path) -> None:
    """Checks that listing a file fails and tells the model to use read."""
    (tmp_path / "f.txt").write_text("")
    with pytest.raises(ToolFailure, match=r"f\.txt is a file, not a directory; use the read tool"):
        await ls(tmp_path, path="f.txt")


def test_ls_is_read_only_and_touches_the_listed_directory(tmp_path: Path) -> None:
    """Covers: R9.4.11. ls is read-only; its touched path is the directory listed (the cwd by
    default)."""
    tool = LsTool()
    ctx = ToolContext(cwd=tmp_path)
    assert tool.read_only is True
    assert tool.touched_paths(tool.parse({}), ctx) == [tmp_path]
    assert tool.touched_paths(tool.parse({"path": "x/../y"}), ctx) == [tmp_path / "y"]


def test_start_render_names_the_directory(tmp_path: Path) -> None:
    """Checks the start-time kv descriptor: "." for the cwd, the relative path otherwise."""
    tool = LsTool()
    ctx = ToolContext(cwd=tmp_path)
    start = tool.start_render(tool.parse({}), ctx)
    assert isinstance(start, KvRender)
    assert start.to_wire() == {"kind": "kv", "pairs": [{"k": "path", "v": "."}]}
    sub = tool.start_render(tool.parse({"path": "a/b"}), ctx)
    assert sub.to_wire() == {"kind": "kv", "pairs": [{"k": "path", "v": "a/b"}]}


_NAME = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=8).filter(lambda s: s not in {".", ".."})


@settings(max_examples=50, deadline=None)
@given(entries=st.dictionaries(_NAME, st.booleans(), max_size=25))
def test_listing_matches_the_directory_for_any_names(entries: dict[str, bool]) -> None:
    """Covers: R11.0.15. For any set of files and directories (names unique ignoring case, as on
    a case-insensitive filesystem they would be): every entry appears once, sorted, dirs marked,
    and the path_list agrees with the text."""
    unique: dict[str, bool] = {}
    for name, is_dir in entries.items():
        if name.lower() not in {n.lower() for n in unique}:
            unique[name] = is_dir

    with tempfile.TemporaryDirectory() as d:
        cwd = Path(d)
        for name, is_dir in unique.items():
            (cwd / name).mkdir() if is_dir else (cwd / name).write_text("")
        out = asyncio.run(ls(cwd))

    names = sorted(unique, key=str.lower)
    expected = [n + ("/" if unique[n] else "") for n in names]
    assert text_of(out) == ("\n".join(expected) if expected else "(empty directory)")
    assert render_of(out) == [(n, "dir" if unique[n] else "file") for n in names]

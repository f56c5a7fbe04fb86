"""What ``workspace.diff`` makes of git's output (``workspaces/patch.py``): the file list read from
``--raw --numstat -z`` whatever the names hold, a record cut by the bound dropped, hunks in the diff
RenderDescriptor's shape, and the bounds of the answer."""

from __future__ import annotations

from shard.daemon.workspaces import patch


def raw(status: str, *paths: str) -> str:
    return f":100644 100644 {'a' * 7} {'b' * 7} {status}\0" + "".join(p + "\0" for p in paths)


def test_names_that_look_like_records_or_hold_tabs_and_newlines_stay_names():
    listing = (
        raw("M", ":100644 tricky")
        + raw("R087", "old\tname", "new\nname")
        + raw("A", "pic.png")
        + "1\t2\t:100644 tricky\0"
        + "3\t0\t\0old\tname\0new\nname\0"
        + "-\t-\tpic.png\0"
    )
    entries = patch.parse_list(listing)
    assert [(e.status, e.path, e.old_path, e.added, e.removed) for e in entries] == [
        ("M", ":100644 tricky", None, 1, 2),
        ("R", "new\nname", "old\tname", 3, 0),
        ("A", "pic.png", None, None, None),
    ]


def test_a_list_cut_short_keeps_the_whole_records_only():
    listing = raw("M", "a.txt") + raw("R100", "b.txt")  # the rename's new path was cut off
    assert [e.path for e in patch.parse_list(listing)] == ["a.txt"]


def test_hunks_take_the_descriptors_shape_and_no_newline_markers_are_left_out():
    part = (
        "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n"
        "@@ -1,2 +1 @@ fn\n one\r\n-two\n\\ No newline at end of file\n+diff --git looks like a header\n"
    )
    [hunk] = patch.parse_chunk(part).hunks
    assert hunk == {
        "old_start": 1,
        "old_lines": 2,
        "new_start": 1,
        "new_lines": 1,
        "lines": [" one", "-two", "+diff --git looks like a header"],
    }
    assert len(patch.split_patch(part + part)) == 2


def test_a_file_over_the_bound_keeps_its_whole_hunks_that_fit_and_says_it_was_cut():
    line = "+" + "x" * 1023
    hunk = "@@ -0,0 +1,100 @@\n" + "\n".join([line] * 100) + "\n"
    part = "diff --git a/big b/big\n" + hunk * 400  # 400 hunks of 100 KB
    entries = patch.parse_list(raw("A", "big") + "40000\t0\tbig\0")
    data = patch.answer(entries, [part], total=1, cut=False, too_large=set())
    [big] = data["files"]
    assert big["truncated"] is True
    assert data["truncated"] is True
    assert len(big["hunks"]) == patch.MAX_FILE_BYTES // (1024 * 100)
    assert big["added"] == 40000  # git's count, not the kept lines'

"""RenderDescriptors as terminal text: every §11 kind, diffs coloured, nothing parsed as markup."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from shard.protocol.render import RenderDescriptor
from shard.tui.render import card, descriptor, unknown
from shard.tui.view import ToolCard

DESCRIPTORS = TypeAdapter(RenderDescriptor)


def styled(text, fragment: str) -> str:
    return next(str(s.style) for s in text.spans if text.plain[s.start : s.end].startswith(fragment))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"kind": "text", "text": "[bold]not markup[/bold]"}, "[bold]not markup[/bold]\n"),
        ({"kind": "kv", "pairs": [{"k": "a", "v": "1"}]}, "a: 1\n"),
        (
            {"kind": "code", "path": "x.py", "text": "print(1)\nprint(2)"},
            "x.py\n   1 print(1)\n   2 print(2)\n",
        ),
        (
            {
                "kind": "path_list",
                "paths": [{"path": "src", "kind": "dir"}, {"path": "a.py", "kind": "file", "hint": "3 KB"}],
            },
            "src/\na.py  3 KB\n",
        ),
        (
            {"kind": "tree", "root": {"label": "src", "kind": "dir", "children": [{"label": "a.py"}]}},
            "src/\n  a.py\n",
        ),
        ({"kind": "command", "command": "ls", "exitCode": 2, "durationMs": 1500}, "$ ls\nexit 2 · 1.5 s\n"),
        ({"kind": "status", "label": "careful", "tone": "warn"}, "careful\n"),
        ({"kind": "progress", "label": "files", "current": 3, "total": 10}, "files: 3 / 10\n"),
        ({"kind": "diff", "path": "notes.txt", "hunks": []}, "notes.txt\nno change\n"),  # nothing changed
    ],
)
def test_each_kind_renders_as_text(raw, expected):
    """Covers: R11.0.6, R9.4.14"""
    assert descriptor(DESCRIPTORS.validate_python(raw)).plain == expected


def test_a_diff_is_coloured_and_an_unknown_kind_shows_as_json():
    """Covers: R11.0.6, R11.0.13"""
    raw = {"kind": "diff", "path": "a.txt", "hunks": [{"old_start": 1, "old_lines": 2, "new_start": 1,
           "new_lines": 2, "lines": [" same", "-old", "+new"]}]}  # fmt: skip
    text = descriptor(DESCRIPTORS.validate_python(raw))
    assert text.plain == "a.txt\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n"
    assert (styled(text, "-old"), styled(text, "+new"), styled(text, "@@")) == ("red", "green", "magenta")
    assert unknown({"kind": "hologram", "frames": 3}).plain == '{"frames": 3, "kind": "hologram"}\n'
    tool = ToolCard("t1", "zap", {}, done=True, unknown={"kind": "hologram"}, result_text="zapped")
    assert card(tool).plain == '⚙ zap   [done]\n{"kind": "hologram"}\nzapped\n'

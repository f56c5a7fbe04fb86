"""``server__tool``: provider-legal, capped, stable, and never two tools under one name."""

from __future__ import annotations

import re

from shard.agent.mcp.names import MAX_LENGTH, assign, tool_name

LEGAL = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_a_legal_name_is_server_and_tool():
    assert tool_name("fs", "read_file") == "fs__read_file"


def test_characters_outside_the_charset_become_underscores():
    assert tool_name("docs", "search.pages v2/ü") == "docs__search_pages_v2__"
    assert tool_name("docs", "") == "docs___"


def test_a_long_name_is_capped_and_stays_distinct_and_stable():
    a = tool_name("server", "x" * 100 + "a")
    b = tool_name("server", "x" * 100 + "b")
    assert len(a) == len(b) == MAX_LENGTH
    assert LEGAL.fullmatch(a)
    assert LEGAL.fullmatch(b)
    assert a != b
    assert a == tool_name("server", "x" * 100 + "a"), "the same every run: stored grants keep matching"


def test_collisions_are_refused_with_a_line_each():
    named, refused = assign("fs", ["read.file", "read_file", "ls"], taken={"fs__ls"})
    assert named == {"fs__read_file": "read.file"}
    assert refused == [
        "MCP tool 'read_file' of server 'fs' is left out: the name fs__read_file is taken",
        "MCP tool 'ls' of server 'fs' is left out: the name fs__ls is taken",
    ]

"""``shard.cli.parser``: a command's parser built alone (what ``main`` does for a line that names
the command, issue 31) parses every line as the whole parser does, and says the same on a mistake
or ``--help``."""

from __future__ import annotations

import contextlib
import io

import pytest

from shard.cli.parser import COMMANDS, build_parser

LINES = [
    ["agent", "--stdio", "--model", "m", "--cwd", "/x", "--agent-id", "agent-1"],
    ["agent"],
    ["agent", "--stdio", "--sandbox", "wide"],
    ["run", "hello", "--json", "--model", "p/m", "--allow", "read"],
    ["run", "--continue", "-"],
    ["run", "--bogus", "x"],
    ["run", "--version"],
    ["daemon", "--port", "0", "--home", "/h", "--max-runtimes", "5", "--cold-start"],
    ["daemon", "--ho", "/h"],
    ["daemon", "--port", "x"],
    ["daemon", "--help"],
    ["web", "enroll", "--home", "/h"],
    ["web"],
    ["sessions", "--here", "show", "sess-1", "--json"],
    ["sessions", "--here", "--cwd", "/x"],
    ["acp", "--direct"],
    ["mcp", "list", "--json"],
    ["attach", "agent-1"],
    ["hosts", "check", "box"],
    ["hosts", "setup"],
    ["schema"],
    ["schema", "extra"],
]


def _outcome(only: str | None, line: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(build_parser(only).parse_args(line))
        except SystemExit as exit_:
            result = ("exit", exit_.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("line", LINES, ids=[" ".join(line) for line in LINES])
def test_a_command_parsed_alone_is_parsed_as_by_the_whole_line(line: list[str]) -> None:
    assert line[0] in COMMANDS
    alone = _outcome(line[0], line)
    assert alone == _outcome(None, line)
    assert alone[0] != ("exit", None) or alone[1], "a help line printed something"


def test_built_alone_it_holds_that_command_only() -> None:
    for name in COMMANDS:
        (sub,) = (a for a in build_parser(name)._actions if a.dest == "command")
        assert list(sub.choices) == [name]  # type: ignore[union-attr]
    (sub,) = (a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # type: ignore[union-attr]
    assert {"agent", "run", "daemon", "sessions", "hosts", "schema"} <= set(COMMANDS)

"""Boundary: no grant is wider than what the person saw.

A real ``shard agent --stdio`` whose scripted model first runs a command the person allows with
"always allow commands like …", then tries a command that the same words would cover if the grant
were read loosely: another module of the interpreter, or the same program on a file outside the
working directory. The second call must raise a new permission request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home


def _bash(command: str) -> dict[str, Any]:
    return tool_step("bash", {"command": command})


async def _run(tmp_path: Path, first: str, second: str) -> tuple[list[dict[str, Any]], AgentProcess]:
    """Allow ``first`` with the always-like choice, then deny whatever is asked next; the messages."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "data.json").write_text('{"a": 1}\n')
    (project / "notes.txt").write_text("notes\n")
    (project / "evil.py").write_text("open('pwned', 'w').write('x')\n")
    (tmp_path / "secret.txt").write_text("TOPSECRET\n")
    home = write_scripted_home(tmp_path / "home", [_bash(first), _bash(second), text_step("done")])
    agent = await AgentProcess.start(home, project)
    await agent.handshake()
    await agent.send({"type": "prompt", "message": "go"})
    read = await agent.until_type("permission_request")
    request = read[-1]
    offered = {c["id"]: c["label"] for c in request["choices"]}
    assert "always-like" in offered, offered
    await agent.send(
        {"type": "permission_response", "request_id": request["request_id"], "choice_id": "always-like"}
    )
    read = await agent.until(lambda m: m["type"] in ("permission_request", "turn_end"))
    if read[-1]["type"] == "permission_request":
        again = read[-1]
        await agent.send(
            {"type": "permission_response", "request_id": again["request_id"], "choice_id": "deny"}
        )
        read += await agent.until_type("turn_end")
    return read, agent


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("python3 -m json.tool data.json", "python3 -m cProfile evil.py"),
        ("python3 -m json.tool data.json", "python3 evil.py"),
        ("cat notes.txt", "cat ../secret.txt"),
        ("cat notes.txt", "cat {outside}"),
        ("cat notes.txt", "cat < {outside}"),
    ],
)
async def test_a_signature_grant_does_not_cover_other_code_or_outside_files(tmp_path, first, second):
    """The grant made from ``first`` does not let ``second`` run without asking: a second request
    comes, and once it is denied the outside file was not read and the code did not run.

    Covers: R9.5.17, R9.5.9, R4.3.4
    """
    second = second.format(outside=tmp_path / "secret.txt")
    read, agent = await _run(tmp_path, first, second)
    try:
        asked = [m for m in read if m["type"] == "permission_request"]
        assert len(asked) == 1, [m["type"] for m in read]
        assert asked[0]["input"] == {"command": second}
        assert "TOPSECRET" not in repr(read)
        assert not (tmp_path / "project" / "pwned").exists()
    finally:
        await agent.kill()


async def test_the_grant_still_covers_its_own_kind_of_command(tmp_path):
    """The pinned grant is still useful: the same module on another file inside runs unasked.

    Covers: R9.5.17
    """
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "other.json").write_text("[1]\n")
    read, agent = await _run(tmp_path, "python3 -m json.tool data.json", "python3 -m json.tool other.json")
    try:
        assert [m for m in read if m["type"] == "permission_request"] == []
        results = [m for m in read if m["type"] == "tool_result"]
        assert results[-1]["is_error"] is False
        assert results[-1]["exit_code"] == 0
    finally:
        await agent.kill()

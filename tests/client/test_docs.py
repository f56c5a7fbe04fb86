"""docs/sdk.md's examples, run as written against a real daemon on a scripted model: an example
that no longer works fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from shard.testing.home import text_step, tool_step
from shard.testing.web import enrollment_code

DOC = Path(__file__).resolve().parents[2] / "docs" / "sdk.md"
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```python\n(.*?)```", re.S)

# what the scripted model answers in each example, and what the example must print
STEPS: dict[str, tuple[list[dict[str, Any]], str]] = {
    "basic": ([text_step("notes.txt says hello.")], "notes.txt says hello."),
    "permissions": (
        [tool_step("touch", {"path": "done.txt"}, "Creating it."), text_step("Created.")],
        "Creating it.",
    ),
    "websocket": ([text_step("unused")], ""),
    "names": ([tool_step("touch", {"path": "done.txt"}), text_step("Created.")], "Allowed by you"),
    "queue": (
        [{"blocks": [{"type": "text", "text": "working"}], "stall": True}],
        "not sent: ['keep the public API'] aborted",
    ),
    "stdio": ([text_step("Hello from stdio!")], "Hello from stdio!"),
    "subagents": ([text_step("a.txt b.txt")], "scout completed a.txt b.txt"),
    "delegated": (  # the child asks (only the parent has a client); the parent woken later asks too
        [tool_step("touch", {"path": "done.txt"}), text_step("Created.")],
        "writer completed",
    ),
}


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall(DOC.read_text()))


def test_every_example_is_run():
    assert sorted(examples()) == sorted(STEPS)


@pytest.mark.parametrize("name", sorted(STEPS))
async def test_example(
    name: str, daemon_factory, project: Path, home: Path, tmp_path: Path, monkeypatch, capsys
):
    """Covers: R12.1.2, R12.5.1, R12.5.5"""
    steps, expected = STEPS[name]
    daemon = await daemon_factory(steps, loop=True)
    monkeypatch.setenv("SHARD_HOME", str(home))
    monkeypatch.setenv("SHARD_SDK_SESSION", str(tmp_path / "session.json"))
    monkeypatch.setenv(
        "SHARD_ENROLL_LINK",
        f"http://127.0.0.1:{daemon.port}/enroll#code={await enrollment_code(daemon.socket)}",
    )
    monkeypatch.chdir(project)
    namespace: dict[str, Any] = {"__name__": f"sdk_example_{name}"}
    exec(compile(examples()[name], f"docs/sdk.md:{name}", "exec"), namespace)
    await namespace["main"]()
    out = capsys.readouterr().out
    assert expected in out
    if name in ("permissions", "delegated", "names"):
        assert (project / "done.txt").exists()
    if name == "delegated":
        assert "asks: " in out
    if name == "websocket":
        assert (tmp_path / "session.json").exists()

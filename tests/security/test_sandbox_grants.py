"""Boundary: a stored grant never carries a call out of the sandbox (issue 25 item 2, third point).

With a sandbox in use, a grant ("always allow commands like ``git status``", or "this exact call")
was given for commands that ran confined — or for one call — and what a confined command writes
(a script, a program in the project) would otherwise run outside on its strength. So a call that
runs outside an active sandbox (``bash {sandbox: false}``, or a working directory the sandbox
cannot confine) always asks, and its request offers no "always" choice. Real ``shard agent --stdio``
runtimes with scripted models, and the pure gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shard.agent.modes import BUILTIN_MODES
from shard.agent.permissions.gate import Allow, Ask, Standing, decide
from shard.agent.permissions.grants import exact_rule, signature_rule
from shard.agent.permissions.headless import HeadlessPolicy
from shard.agent.permissions.shell import analyze
from shard.agent.sandbox.bwrap import configured
from shard.agent.tools.base import ToolContext
from shard.agent.tools.bash import BashTool
from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home


def _bash(command: str, **extra: Any) -> dict[str, Any]:
    return tool_step("bash", {"command": command, **extra})


OUTSIDE = {"sandbox": False, "reason": "needs the network"}


async def _answering(tmp_path: Path, steps: list[dict[str, Any]], answers: list[dict[str, Any]]):
    """Run ``steps`` in a runtime with the sandbox on ``ask``, answering each permission request in
    turn with the next of ``answers``; every message read, and the requests."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    home = write_scripted_home(tmp_path / "home", [*steps, text_step("done")])
    agent = await AgentProcess.start(home, project, "--sandbox", "ask")
    read: list[dict[str, Any]] = []
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "id": "p", "message": "go"})
        for answer in answers:
            read += await agent.until(lambda m: m["type"] in ("permission_request", "turn_end"))
            assert read[-1]["type"] == "permission_request", [m["type"] for m in read]
            await agent.send({"type": "permission_response", "request_id": read[-1]["request_id"], **answer})
        read += await agent.until_type("turn_end")
    finally:
        await agent.kill()
    return read, [m for m in read if m["type"] == "permission_request"]


async def test_a_commands_like_grant_made_confined_does_not_carry_a_call_outside(tmp_path: Path):
    """``touch a.txt`` asks (sandbox ``ask``) and is allowed "always, commands like it"; ``touch
    b.txt`` confined then runs without asking (the grant works); ``touch outside-ran`` asked to run
    outside asks again, offering only "Allow once" and "Deny"; denied, it does not run.

    Covers: R9.5.17, R4.3.4
    """
    steps = [_bash("touch a.txt"), _bash("touch b.txt"), _bash("touch outside-ran", **OUTSIDE)]
    answers = [{"choice_id": "always-like"}, {"choice_id": "deny"}]
    read, asked = await _answering(tmp_path, steps, answers)
    assert [r["input"] for r in asked] == [
        {"command": "touch a.txt"},
        {"command": "touch outside-ran", **OUTSIDE},
    ]
    assert [c["id"] for c in asked[1]["choices"]] == ["allow", "deny"]
    assert asked[1]["options"] == ["allow", "deny"]
    assert [m.get("sandboxed") for m in read if m["type"] == "tool_call"] == [True, True]
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["a.txt", "b.txt"]


async def test_an_always_answer_to_a_call_outside_leaves_no_grant(tmp_path: Path):
    """A client that still answers with the legacy ``allow_always`` to a call outside the sandbox:
    it runs once, and exactly the same call asks again (no exact grant was kept for it).

    Covers: R9.5.9, R9.5.7
    """
    call = _bash("echo ran >> outside.log", **OUTSIDE)
    answers = [{"decision": "allow_always"}, {"choice_id": "deny"}]
    _, asked = await _answering(tmp_path, [call, call], answers)
    assert len(asked) == 2
    assert asked[0]["input"] == asked[1]["input"]
    assert (tmp_path / "project" / "outside.log").read_text() == "ran\n"


def _standing(grants: list[Any]) -> Standing:
    return Standing(
        mode=BUILTIN_MODES[0],
        grants=grants,
        allowances=None,
        answerable=True,
        headless=HeadlessPolicy(),
    )


def test_the_gate_lets_no_stored_grant_allow_a_call_outside_an_active_sandbox(tmp_path: Path):
    """The pure gate, the sandbox in ``ask``: a signature grant and an exact grant both allow
    their confined call, and neither allows the same command outside the sandbox — nor in a
    working directory the sandbox hides; with the sandbox off, they allow it as before.

    Covers: R9.5.15, R9.5.17
    """
    project = tmp_path / "project"
    (project / ".ssh").mkdir(parents=True)
    tool = BashTool()
    confined = {"command": "git status"}
    outside = {"command": "git status", **OUTSIDE}
    grants = [signature_rule(analyze("git status") or []), exact_rule("bash", outside)]
    sandbox = configured("ask", shard_home=tmp_path / "shard", hidden=(project / ".ssh",))
    assert sandbox.active
    ctx = ToolContext(cwd=project, sandbox=sandbox)

    def verdict(raw: dict[str, Any], where: ToolContext) -> object:
        return decide(tool, tool.parse(raw), raw, where, _standing(grants))

    assert isinstance(verdict(confined, ctx), Allow)
    assert isinstance(verdict(outside, ctx), Ask)
    assert isinstance(verdict(confined, ToolContext(cwd=project / ".ssh", sandbox=sandbox)), Ask)
    assert isinstance(
        verdict(outside, ToolContext(cwd=project, sandbox=configured("off", shard_home=tmp_path))), Allow
    )

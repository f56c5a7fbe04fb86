"""Boundary: a folder whose name merely starts with the working directory's is outside it (issue 25
item 9). With the cwd ``…/proj``, ``…/project-secrets/key.txt`` shares its first characters but not
its path: a real ``shard agent --stdio``, whose scripted model reads, lists, greps and writes there,
asks before each, and a denial leaves the secret unread and nothing written."""

from __future__ import annotations

from pathlib import Path

from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home

SECRET = "PREFIX-SECRET-5150"


async def test_a_sibling_whose_name_extends_the_cwd_is_outside(tmp_path: Path) -> None:
    """Every tool call on ``project-secrets`` beside the cwd ``proj`` — by absolute path and through
    ``..`` — is a permission request naming it as outside; denied, the secret appears nowhere and no
    file is made.

    Covers: R9.5.1, R9.4.14
    """
    cwd = tmp_path / "proj"
    cwd.mkdir()
    sibling = tmp_path / "project-secrets"
    sibling.mkdir()
    (sibling / "key.txt").write_text(f"key = {SECRET}\n")
    steps = [
        tool_step("read", {"path": str(sibling / "key.txt")}),
        tool_step("read", {"path": "../project-secrets/key.txt"}),
        tool_step("ls", {"path": str(sibling)}),
        tool_step("grep", {"pattern": "PREFIX", "path": str(sibling)}),
        tool_step("write", {"path": str(sibling / "planted.txt"), "content": "x"}),
        text_step("done"),
    ]
    home = write_scripted_home(tmp_path / "home", steps)
    agent = await AgentProcess.start(home, cwd)
    try:
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        asked = []
        while True:
            read = await agent.until(lambda m: m["type"] in ("permission_request", "turn_end"))
            if read[-1]["type"] == "turn_end":
                break
            request = read[-1]
            asked.append(request)
            await agent.send(
                {"type": "permission_response", "request_id": request["request_id"], "decision": "deny"}
            )
    finally:
        await agent.kill()
    assert [r["tool_name"] for r in asked] == ["read", "read", "ls", "grep", "write"]
    for request in asked:
        assert "outside" in request["prompt"].lower(), request["prompt"]
    results = [m for m in agent.seen if m["type"] == "tool_result"]
    assert len(results) == 5
    assert all(r["is_error"] for r in results)
    assert SECRET not in str(agent.seen)
    assert SECRET not in (home / "requests.jsonl").read_text()
    assert sorted(p.name for p in sibling.iterdir()) == ["key.txt"]

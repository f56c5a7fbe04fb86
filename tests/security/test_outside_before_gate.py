"""Boundary: nothing outside the working directory is looked at before the gate allows it.

Each test runs a real ``shard agent --stdio`` whose scripted model calls a tool on a path outside
the project, in variants that differ only in what lies out there (nothing, a file without the text,
a file with it). Until the person answers, everything the agent says — the result the model reads,
the permission request a client sees — must be the same in every variant: otherwise the model has an
oracle for the existence and content of any file, even under ``--headless-policy deny``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from shard.testing import AgentProcess, text_step, tool_step, write_scripted_home

SECRET = "TOPSECRET-4242"
Variant = Callable[[Path], None]


def _absent(target: Path) -> None:
    pass


def _without_text(target: Path) -> None:
    target.write_text("nothing to see here\n")


def _with_text(target: Path) -> None:
    target.write_text(f"password = {SECRET}\n")


VARIANTS: list[Variant] = [_absent, _without_text, _with_text]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    where = tmp_path / "elsewhere"
    where.mkdir()
    return where


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("inside\n")
    return root


@pytest.fixture
async def run_agent(tmp_path: Path, project: Path) -> AsyncIterator[Callable[..., Any]]:
    procs: list[AgentProcess] = []

    async def _run(step: dict[str, Any], *, answer: str | None, home_name: str) -> list[dict[str, Any]]:
        """One prompt that makes the model take ``step``; with ``answer`` a client answers the
        permission request with it, without one stdin closes first (headless: the deny policy)."""
        home = tmp_path / home_name
        step["blocks"].insert(0, {"type": "pause", "ms": 300})  # stdin closes before the gate
        write_scripted_home(home, [step, text_step("done")])
        agent = await AgentProcess.start(home, project)
        procs.append(agent)
        await agent.handshake()
        await agent.send({"type": "prompt", "message": "go"})
        if answer is None:
            await agent.close_stdin()
            read = await agent.until_type("turn_end")
        else:
            read = await agent.until(lambda m: m["type"] in ("permission_request", "turn_end"))
            if read[-1]["type"] == "permission_request":
                request = read[-1]
                await agent.send(
                    {"type": "permission_response", "request_id": request["request_id"], "choice_id": answer}
                )
                read += await agent.until_type("turn_end")
        return read

    yield _run
    for proc in procs:
        await proc.kill()


def _normalized(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with what differs by nature (random ids, timings) blanked out."""
    out = []
    for message in messages:
        if message["type"] in ("message_delta", "usage"):
            continue
        text = re.sub(r"\b(req|msg|turn|tc)-[A-Za-z0-9_-]+", r"\1-ID", repr(message))
        text = re.sub(r"'duration_ms': [0-9.]+", "'duration_ms': T", text)
        out.append(text)
    return out


def _edit(target: Path) -> dict[str, Any]:
    return tool_step("edit", {"path": str(target), "edits": [{"old_text": SECRET, "new_text": "x"}]})


async def test_headless_edit_outside_answers_the_same_whatever_the_file_holds(run_agent, outside):
    """An ``edit`` of a file outside the cwd under the headless deny policy: the model reads the
    same permission refusal whether the file is missing, lacks the text or holds it — no "no such
    file", no "not found in", no request raised only when the text matches.

    Covers: R4.3.4
    """
    results = []
    for n, variant in enumerate(VARIANTS):
        target = outside / "shadow"
        target.unlink(missing_ok=True)
        variant(target)
        read = await run_agent(_edit(target), answer=None, home_name=f"home{n}")
        result = next(m for m in read if m["type"] == "tool_result")
        assert result["is_error"] is True
        assert "Permission denied" in result["content"]["message"], result
        results.append(_normalized(read))
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize(
    "step",
    [
        pytest.param(_edit, id="edit"),
        pytest.param(lambda t: tool_step("write", {"path": str(t), "content": "new\n"}), id="write"),
        pytest.param(lambda t: tool_step("read", {"path": str(t)}), id="read"),
        pytest.param(lambda t: tool_step("grep", {"pattern": SECRET, "path": str(t)}), id="grep"),
    ],
)
async def test_the_request_for_an_outside_path_is_the_same_whatever_lies_there(run_agent, outside, step):
    """With a client to ask, a call on an outside path always raises a permission request first —
    built from the arguments alone: identical whether the file exists or what it holds, never showing
    its content — and a denial gives the model the same answer in every case.

    Covers: R4.3.4, R9.5.1
    """
    transcripts = []
    for n, variant in enumerate(VARIANTS):
        target = outside / "shadow"
        target.unlink(missing_ok=True)
        variant(target)
        read = await run_agent(step(target), answer="deny", home_name=f"home{n}")
        requests = [m for m in read if m["type"] == "permission_request"]
        assert len(requests) == 1, [m["type"] for m in read]
        assert "outside the working directory" in requests[0]["prompt"]
        assert "password" not in repr(read)
        transcripts.append(_normalized(read))
    assert transcripts[0] == transcripts[1] == transcripts[2]


async def test_a_request_for_a_link_names_where_it_leads(run_agent, project, outside):
    """A link inside the project that points outside is asked about under the name of its resolved
    target, not only the harmless-looking name of the link.

    Covers: R9.5.2
    """
    (outside / "id_rsa").write_text("key\n")
    (project / "harmless.txt").symlink_to(outside / "id_rsa")
    read = await run_agent(tool_step("read", {"path": "harmless.txt"}), answer="deny", home_name="home")
    request = next(m for m in read if m["type"] == "permission_request")
    assert str(outside / "id_rsa") in request["prompt"]
    shown = {d.get("label"): d["value"] for d in request["details"]}
    assert str(outside / "id_rsa") in shown["outside the working directory"]
    assert "harmless.txt" in shown["outside the working directory"]


async def test_a_link_through_a_linked_folder_names_the_real_target(run_agent, project, outside):
    """A path through a linked directory (``vendor/`` → outside) is resolved to where it really
    goes; a path that does not exist beyond the link is named the same way, without a look.

    Covers: R9.5.2
    """
    (project / "vendor").symlink_to(outside)
    read = await run_agent(tool_step("read", {"path": "vendor/missing.txt"}), answer="deny", home_name="h")
    request = next(m for m in read if m["type"] == "permission_request")
    assert str(outside / "missing.txt") in request["prompt"]


async def test_ls_inside_does_not_follow_a_link_that_leads_outside(run_agent, project, outside):
    """``ls`` of the project runs without asking, but a link in it that leads outside is listed as
    ``name@`` whether its target is a folder, a file or missing: the listing tells nothing about
    what lies outside.
    """
    outputs = []
    target = outside / "target"
    for n, make in enumerate([lambda: target.mkdir(), lambda: target.write_text("x"), lambda: None]):
        if target.is_dir():
            target.rmdir()
        target.unlink(missing_ok=True)
        make()
        link = project / "out"
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        read = await run_agent(tool_step("ls", {"path": "."}), answer=None, home_name=f"home{n}")
        result = next(m for m in read if m["type"] == "tool_result")
        assert result["is_error"] is False
        outputs.append(result["content"]["text"])
    assert outputs[0] == outputs[1] == outputs[2]
    assert "out@" in outputs[0].splitlines()

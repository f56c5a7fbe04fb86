"""The pure mapping between our wire protocol and ACP (shard.acp.mapping), without processes."""

from __future__ import annotations

from types import ModuleType

import pytest

from shard.protocol.content import (
    ErrorContent,
    ImageBlock,
    JsonContent,
    Message,
    TextBlock,
    TextContent,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from shard.protocol.events import PermissionRequest, ToolResult
from shard.protocol.permissions import PermissionChoice, PermissionDetail
from shard.protocol.render import DiffRender, Hunk


@pytest.fixture
def mapping() -> ModuleType:
    """shard.acp.mapping, imported by the tests that use it: at the top of this file, it (and the ACP
    SDK it imports) would be imported by every xdist worker collecting the suite."""
    from shard.acp import mapping

    return mapping


def _request(**fields) -> PermissionRequest:
    base = {"request_id": "req-1", "tool_name": "bash", "input": {"command": "ls"}, "prompt": "Run ls?"}
    base.setdefault("options", ["allow", "allow_always", "deny"])
    return PermissionRequest(**{**base, **fields})


def test_tool_kinds_titles_and_locations(mapping):
    assert mapping.tool_kind("read") == "read"
    assert mapping.tool_kind("edit") == "edit"
    assert mapping.tool_kind("bash") == "execute"
    assert mapping.tool_kind("grep") == "search"
    assert mapping.tool_kind("my_ext", read_only=True) == "read"
    assert mapping.tool_kind("my_ext") == "other"  # absent read_only: treated as mutating, not a read
    assert mapping.tool_title("read", {"path": "a.txt"}) == "read a.txt"
    assert mapping.tool_title("bash", {"command": "make test\nmake lint"}) == "bash: make test"
    assert mapping.tool_title("ls", {}) == "ls"
    [where] = mapping.locations({"path": "src/x.py", "offset": 10}, "/proj")
    assert (where.path, where.line) == ("/proj/src/x.py", 10)
    assert mapping.locations({"path": "/abs/y"}, "/proj")[0].path == "/abs/y"
    assert mapping.locations({"command": "ls"}, "/proj") == []


def test_a_diff_render_becomes_an_acp_diff_of_both_sides(mapping):
    hunks = [
        Hunk(old_start=1, old_lines=2, new_start=1, new_lines=2, lines=[" keep", "-old", "+new"]),
        Hunk(old_start=9, old_lines=1, new_start=9, new_lines=2, lines=[" tail", "+added"]),
    ]
    diff = mapping.diff_content(DiffRender(path="f.txt", hunks=hunks), "/proj")
    assert diff.type == "diff"
    assert diff.path == "/proj/f.txt"
    assert diff.old_text == "keep\nold\n…\ntail"
    assert diff.new_text == "keep\nnew\n…\ntail\nadded"
    created = mapping.diff_content(
        DiffRender(
            path="n.txt", hunks=[Hunk(old_start=0, old_lines=0, new_start=1, new_lines=1, lines=["+x"])]
        ),
        "/proj",
    )
    assert created.old_text is None  # a new file has no old side


def test_a_tool_result_completes_or_fails_the_call(mapping):
    ok = mapping.result_update(
        ToolResult(tool_call_id="tc-1", content=TextContent(text="out"), is_error=False, exit_code=0), "/p"
    )
    assert (ok.session_update, ok.tool_call_id, ok.status) == ("tool_call_update", "tc-1", "completed")
    assert ok.content[0].content.text == "out"
    assert ok.raw_output == {"is_error": False, "exit_code": 0}
    failed = mapping.result_update(
        ToolResult(tool_call_id="tc-2", content=ErrorContent(message="boom"), is_error=True, exit_code=2),
        "/p",
    )
    assert failed.status == "failed"
    assert failed.content[0].content.text == "boom\n[exit code: 2]"
    as_json = mapping.result_update(
        ToolResult(tool_call_id="tc-3", content=JsonContent(value={"a": 1}), is_error=False), "/p"
    )
    assert '"a": 1' in as_json.content[0].content.text
    huge = mapping.result_text(TextContent(text="x" * (mapping.RESULT_CHARS + 10)))
    assert len(huge) < mapping.RESULT_CHARS + 40
    assert huge.endswith("(cut for the editor)")


def test_choices_map_to_acp_option_kinds_and_back_by_choice_id(mapping):
    choices = [
        PermissionChoice(id="c-allow", label="Allow once", intent="allow"),
        PermissionChoice(id="c-rule", label="Always for ls", intent="persist"),
        PermissionChoice(id="c-deny", label="Deny", intent="deny"),
    ]
    request = _request(choices=choices)
    options = mapping.permission_options(request)
    assert [(o.option_id, o.kind, o.name) for o in options] == [
        ("c-allow", "allow_once", "Allow once"),
        ("c-rule", "allow_always", "Always for ls"),
        ("c-deny", "reject_once", "Deny"),
    ]
    assert mapping.answer_for(request, "c-rule") == mapping.Answer(choice_id="c-rule")
    assert mapping.answer_for(request, "made-up") is None  # never sent: it was not offered


def test_legacy_options_map_to_decisions(mapping):
    request = _request(options=["allow", "deny"])
    options = mapping.permission_options(request)
    assert [o.kind for o in options] == ["allow_once", "reject_once"]
    assert mapping.answer_for(request, options[1].option_id) == mapping.Answer(decision="deny")
    assert mapping.answer_for(request, "decision:allow_always") is None  # not among this request's options


def test_permission_text_shows_the_prompt_and_details(mapping):
    request = _request(details=[PermissionDetail(label="command", value="rm -rf build", format="command")])
    assert mapping.permission_text(request) == "Run ls?\n\ncommand: ```\nrm -rf build\n```"


def test_history_replays_as_updates(mapping):
    user = Message(
        id="m1",
        role="user",
        content=[TextBlock(text="hello"), ImageBlock(data="aGk=", mime_type="image/png")],
    )
    assistant = Message(
        id="m2",
        role="assistant",
        content=[
            ThinkingBlock(text="hmm"),
            TextBlock(text="reading"),
            ToolCallBlock(id="tc-1", name="read", args={"path": "a.txt"}),
        ],
    )
    result = Message(
        id="m3",
        role="user",
        content=[ToolResultBlock(tool_call_id="tc-1", content=TextContent(text="A"), is_error=False)],
    )
    kinds = [u.session_update for m in (user, assistant, result) for u in mapping.replay_updates(m, "/p")]
    assert kinds == [
        "user_message_chunk",
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
    ]
    [*_, call] = mapping.replay_updates(assistant, "/p")
    assert (call.tool_call_id, call.kind, call.locations[0].path) == ("tc-1", "read", "/p/a.txt")
    [done] = mapping.replay_updates(result, "/p")
    assert done.status == "completed"


def test_a_prompt_becomes_one_text_and_its_images(mapping):
    import acp

    blocks = [
        acp.text_block("look at"),
        acp.resource_link_block("x.py", "file:///p/x.py"),
        acp.resource_block(acp.embedded_text_resource("file:///p/y.py", "print(1)")),
        acp.image_block("aGk=", "image/png"),
    ]
    text, images = mapping.prompt_input(blocks)
    assert text == "look at\n\n@/p/x.py\n\n/p/y.py:\n```\nprint(1)\n```"
    assert [(i.data, i.mime_type) for i in images] == [("aGk=", "image/png")]

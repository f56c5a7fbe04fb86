"""``shard acp`` with no daemon: each ACP session is its own ``shard agent --stdio``. Driven by the
ACP SDK's client side (tests/acp/conftest.py's Editor) over a real ``shard acp`` process, on the
offline scripted provider."""

from __future__ import annotations

import asyncio
import os

import pytest

from shard.testing import recorded_requests, text_step, tool_step, write_scripted_home
from shard.testing.tools import TEST_TOOLS

TIMEOUT = 30.0


async def _prompt(conn, session_id: str, text: str):
    # the SDK is imported by the tests, not at the top: collecting this file would import it
    # (see conftest.py)
    import acp

    return await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]), TIMEOUT)


async def test_initialize_and_a_prompt_streams_chunks(home, project, start_acp):
    thinking = {"type": "thinking", "text": "Let me think."}
    write_scripted_home(
        home, [{"blocks": [thinking, {"type": "text", "text": "Hello from the scripted model."}], "chunk": 5}]
    )
    editor, conn, _ = await start_acp()
    session = await conn.new_session(cwd=str(project))
    assert session.session_id.startswith("sess-")  # the Shard session id: session/load finds it again
    reply = await _prompt(conn, session.session_id, "hi")
    assert reply.stop_reason == "end_turn"
    chunks = editor.of_kind("agent_message_chunk", session.session_id)
    assert len(chunks) > 1  # streamed, not one block at the end
    assert editor.text() == "Hello from the scripted model."
    assert "".join(u.content.text for u in editor.of_kind("agent_thought_chunk")) == "Let me think."
    assert editor.of_kind("user_message_chunk") == []  # the editor's own prompt is not echoed


async def test_initialize_advertises_load_and_images(home, project, start_acp):
    write_scripted_home(home, [text_step("x")])
    import acp

    _, conn, _ = await start_acp()
    init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
    assert init.protocol_version == acp.PROTOCOL_VERSION
    assert init.agent_capabilities.load_session is True
    assert init.agent_capabilities.prompt_capabilities.image is True
    assert init.agent_info.name == "shard"


async def test_a_write_is_a_tool_call_with_locations_and_a_diff_after_the_editor_allows_it(
    home, project, start_acp
):
    steps = [tool_step("write", {"path": "new.txt", "content": "one\ntwo\n"}), text_step("Written.")]
    write_scripted_home(home, steps)
    editor, conn, _ = await start_acp(choose="allow_once")
    session = await conn.new_session(cwd=str(project))
    reply = await _prompt(conn, session.session_id, "write it")
    assert reply.stop_reason == "end_turn"
    assert (project / "new.txt").read_text() == "one\ntwo\n"
    target = os.path.join(str(project), "new.txt")

    [start] = editor.of_kind("tool_call")
    call = editor.call(start.tool_call_id)
    assert call["kind"] == "edit"
    assert call["title"] == "write new.txt"
    assert [loc.path for loc in call["locations"]] == [target]
    assert call["raw_input"] == {"path": "new.txt", "content": "one\ntwo\n"}
    assert call["statuses"][0] == "pending"
    assert call["statuses"][-2:] == ["in_progress", "completed"]

    [(asked, options)] = editor.asked
    assert asked.tool_call_id == start.tool_call_id  # the request is about the announced call
    assert {o.kind for o in options} >= {"allow_once", "allow_always", "reject_once"}

    [diff] = [c for c in call["content"] if c.type == "diff"]
    assert diff.path == target
    assert diff.new_text == "one\ntwo"
    assert diff.old_text is None  # a new file: no old side
    assert editor.text().endswith("Written.")


async def test_rejecting_the_permission_fails_the_tool_call(home, project, start_acp):
    steps = [tool_step("write", {"path": "no.txt", "content": "x"}), text_step("Not written.")]
    write_scripted_home(home, steps)
    editor, conn, _ = await start_acp(choose="reject_once")
    session = await conn.new_session(cwd=str(project))
    reply = await _prompt(conn, session.session_id, "write it")
    assert reply.stop_reason == "end_turn"
    assert not (project / "no.txt").exists()
    [start] = editor.of_kind("tool_call")
    assert editor.call(start.tool_call_id)["statuses"][-1] == "failed"


async def test_cancel_mid_turn_ends_the_prompt_cancelled(home, project, start_acp):
    import acp

    write_scripted_home(
        home, [tool_step("sleep", {"seconds": 60}), text_step("never")], extensions=TEST_TOOLS
    )
    editor, conn, _ = await start_acp()
    session = await conn.new_session(cwd=str(project))
    prompt = asyncio.ensure_future(
        conn.prompt(session_id=session.session_id, prompt=[acp.text_block("wait")])
    )
    await editor.wait_for(
        lambda: [u for u in editor.of_kind("tool_call_update") if u.status == "in_progress"]
    )
    assert not prompt.done()
    await conn.cancel(session_id=session.session_id)
    reply = await asyncio.wait_for(prompt, TIMEOUT)
    assert reply.stop_reason == "cancelled"
    assert "never" not in editor.text()


async def test_modes_and_models_are_offered_and_switched(home, project, start_acp):
    from acp.exceptions import RequestError

    models = [{"id": "m", "context_window": 100_000}, {"id": "m2", "context_window": 50_000}]
    write_scripted_home(
        home, [tool_step("touch", {"path": "t.txt"}), text_step("ok")], models=models, extensions=TEST_TOOLS
    )
    editor, conn, _ = await start_acp()
    session = await conn.new_session(cwd=str(project))
    assert session.modes.current_mode_id == "build"
    assert [m.id for m in session.modes.available_modes] == ["build", "plan"]
    [model] = session.config_options
    assert (model.id, model.category, model.current_value) == ("model", "model", "test/m")
    assert {o.value for o in model.options} >= {"test/m", "test/m2"}

    await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
    await editor.wait_for(lambda: editor.of_kind("current_mode_update"))
    assert editor.of_kind("current_mode_update")[-1].current_mode_id == "plan"
    changed = await conn.set_config_option(config_id="model", session_id=session.session_id, value="test/m2")
    assert changed.config_options[0].current_value == "test/m2"

    reply = await _prompt(conn, session.session_id, "touch it")  # plan mode: the mutating tool is refused
    assert reply.stop_reason == "end_turn"
    assert not (project / "t.txt").exists()
    assert editor.asked == []  # refused by the mode, nobody is asked
    assert {r["model"] for r in recorded_requests(home)} == {"m2"}  # the switched model answered

    with pytest.raises(RequestError):
        await conn.set_session_mode(session_id=session.session_id, mode_id="nonsense")


async def test_load_replays_a_saved_session_and_continues_it(home, project, start_acp):
    from acp.exceptions import RequestError

    write_scripted_home(home, [text_step("First answer."), text_step("Second answer.")])
    _, conn, proc = await start_acp()
    first = await conn.new_session(cwd=str(project))
    await _prompt(conn, first.session_id, "first question")

    editor, conn2, _ = await start_acp()  # another editor window, another shard acp
    with pytest.raises(RequestError) as caught:  # the first still runs the session's agent
        await conn2.load_session(cwd=str(project), session_id=first.session_id)
    assert "open in another shard process" in caught.value.data["message"]
    proc.stdin.write_eof()  # the first editor closes: its shard acp ends, and its agent with it
    assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0

    loaded = await conn2.load_session(cwd=str(project), session_id=first.session_id)
    assert loaded.modes.current_mode_id == "build"
    users = [u.content.text for u in editor.of_kind("user_message_chunk")]
    assert users == ["first question"]  # replayed before the load response
    assert editor.text() == "First answer."
    reply = await _prompt(conn2, first.session_id, "second question")
    assert reply.stop_reason == "end_turn"
    assert editor.text() == "First answer.Second answer."  # the script's next step: history continued


async def test_load_of_an_unknown_session_is_an_error(home, project, start_acp):
    from acp.exceptions import RequestError

    write_scripted_home(home, [text_step("x")])
    _, conn, _ = await start_acp()
    with pytest.raises(RequestError) as caught:
        await conn.load_session(cwd=str(project), session_id="sess-00000000deadbeef")
    assert caught.value.code == -32602
    with pytest.raises(RequestError):  # nor can it be prompted
        await _prompt(conn, "sess-00000000deadbeef", "hi")


async def test_a_prompt_with_an_image_and_a_resource_reaches_the_model(home, project, start_acp):
    import acp

    write_scripted_home(home, [text_step("Seen.")])
    _, conn, _ = await start_acp()
    session = await conn.new_session(cwd=str(project))
    blocks = [
        acp.text_block("what is this?"),
        acp.image_block("aGVsbG8=", "image/png"),
        acp.resource_block(acp.embedded_text_resource(f"file://{project}/notes.txt", "hello")),
    ]
    reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=blocks), TIMEOUT)
    assert reply.stop_reason == "end_turn"
    [request] = recorded_requests(home)
    [user] = [m for m in request["messages"] if m["role"] == "user"]
    assert user["content"][0]["text"] == f"what is this?\n\n{project}/notes.txt:\n```\nhello\n```"
    assert user["content"][1] == {"type": "image", "data": "aGVsbG8=", "mime_type": "image/png"}


async def test_the_same_editor_loading_its_open_session_gets_it_again(home, project, start_acp):
    write_scripted_home(home, [text_step("One."), text_step("Two.")])
    editor, conn, _ = await start_acp()
    session = await conn.new_session(cwd=str(project))
    await _prompt(conn, session.session_id, "first")
    await conn.load_session(cwd=str(project), session_id=session.session_id)  # e.g. the thread reopened
    assert [u.content.text for u in editor.of_kind("user_message_chunk")] == ["first"]
    assert (await _prompt(conn, session.session_id, "second")).stop_reason == "end_turn"
    assert editor.text() == "One.One.Two."  # the reply, its replay, then the next turn

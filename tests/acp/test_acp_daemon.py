"""``shard acp`` with a daemon running on the SHARD_HOME: the editor's sessions are daemon agents,
so a second client (an SDK ``ShardClient``, as the web client or ``shard attach`` would) sees the
same agent and the same turn — and can answer its permission requests for the editor."""

from __future__ import annotations

import asyncio

import pytest

from shard.client import ShardClient, choice_for
from shard.protocol.events import MessageComplete, PermissionRequest, PermissionResolved, TurnEnd
from shard.testing import text_step, tool_step

TIMEOUT = 30.0


async def _agent_of(client: ShardClient, session_id: str):
    [info] = [a for a in await client.list_agents() if a.session_id == session_id]
    return await client.attach(info.agent_id)


@pytest.mark.slow
async def test_a_second_client_sees_the_editors_turn_and_its_permission_answer_releases_it(
    home, project, daemon_factory, start_acp
):
    import acp  # here, not at the top: collecting this file would import the SDK (see conftest.py)

    await daemon_factory(
        [tool_step("write", {"path": "web.txt", "content": "from the web\n"}), text_step("Done.")]
    )
    editor, conn, _ = await start_acp(choose=None)  # the editor never answers: the web does
    session = await conn.new_session(cwd=str(project))
    async with await ShardClient.connect_unix(home=home) as web:
        agent = await _agent_of(web, session.session_id)
        watched = agent.subscribe()
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("write from the web")])
        )
        seen = []
        async with asyncio.timeout(TIMEOUT):
            async for event in watched:
                seen.append(event)
                if isinstance(event, PermissionRequest):
                    await editor.wait_for(lambda: editor.asked)  # the editor was asked too
                    await agent.answer_permission(event.request_id, choice_id=choice_for(event, "allow"))
                if isinstance(event, TurnEnd):
                    break
        reply = await asyncio.wait_for(prompt, TIMEOUT)
        assert reply.stop_reason == "end_turn"  # released by the other client's answer
        assert (project / "web.txt").read_text() == "from the web\n"
        users = [e.message for e in seen if isinstance(e, MessageComplete) and e.message.role == "user"]
        assert [m.content[0].text for m in users] == ["write from the web"]  # the same turn, seen live
        assert any(isinstance(e, PermissionResolved) for e in seen)
        assert editor.text().endswith("Done.")
        editor.held.set_result("reject_once")  # the editor's late answer loses: first answer won
        again = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("still there?")]), TIMEOUT
        )
        assert again.stop_reason == "end_turn"  # the script is past its end: an error, said as text
        assert "has no step" in editor.text()
        assert (project / "web.txt").read_text() == "from the web\n"
        assert len(editor.asked) == 1


@pytest.mark.slow
async def test_load_attaches_to_the_agent_that_holds_the_session_and_replays_it(
    home, project, daemon_factory, start_acp
):
    import acp  # here, not at the top: collecting this file would import the SDK (see conftest.py)

    await daemon_factory([text_step("Answer one."), text_step("Answer two.")])
    async with await ShardClient.connect_unix(home=home) as web:
        agent = await web.create_agent(project)
        await agent.prompt_and_wait("question one", timeout=TIMEOUT)
        session_id = agent.last_sync.model_extra["session_id"]

        editor, conn, _ = await start_acp()
        await conn.load_session(cwd=str(project), session_id=session_id)
        assert [u.content.text for u in editor.of_kind("user_message_chunk")] == ["question one"]
        assert editor.text() == "Answer one."
        [info] = [a for a in await web.list_agents() if a.session_id == session_id]
        assert info.agent_id == agent.agent_id  # the same agent, not a second adoption

        watched = agent.subscribe()
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[acp.text_block("question two")]), TIMEOUT
        )
        assert reply.stop_reason == "end_turn"
        assert editor.text() == "Answer one.Answer two."
        seen = watched.take_ready()
        assert any(isinstance(e, MessageComplete) and e.message.role == "user" for e in seen)

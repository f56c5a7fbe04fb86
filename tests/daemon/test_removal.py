"""``agent.remove`` on a real ``shard daemon`` with two clients (additive to PROTOCOL §10.1 and
§10.2; ARCHITECTURE → The daemon → Removing an agent): a stopped agent and a running one leave the
registry for every client, their runtimes stop, and their sessions stay — listed by ``shard
sessions`` and by ``session_op list``, and reopened as new agents holding their history."""

from __future__ import annotations

import orjson
from daemon_helpers import attach, connect, create_agent, runtime_pids

from shard.testing import run_shard, text_step

SLOW_WRITE = {
    "blocks": [
        {"type": "pause", "ms": 200},
        {"type": "tool_call", "name": "touch", "args": {"path": "made.txt"}},
    ]
}


async def told_removed(client, agent_id: str) -> dict:
    """The ``agent_removed`` of ``agent_id`` this client got, read already or still to come."""

    def match(m: dict) -> bool:
        return m.get("type") == "agent_removed" and m.get("agent_id") == agent_id

    seen = [m for m in client.seen if match(m)]
    return seen[-1] if seen else (await client.until(match))[-1]


async def test_stopped_and_running_agents_are_removed_for_everyone_and_their_sessions_kept(
    daemon_factory, transport, home, project
):
    """One client removes a stopped agent and then one waiting on a permission answer: the answers
    name them, both clients get ``agent_removed`` (with the session) and no longer list them, the
    running one's runtime is gone and its open request closed; both sessions are on disk, listed by
    ``shard sessions`` and ``session_op list``, and reopen as new agents with their history.

    Covers: R5.2.4, R6.3.6, R6.4.11, R10.1.9, R12.4.1
    """
    daemon = await daemon_factory([SLOW_WRITE, text_step("done")])
    remover = await connect(daemon, transport)
    other = await connect(daemon, "websocket" if transport == "unix" else "unix")

    stopped = await create_agent(remover, project)
    _, first = await attach(remover, stopped)
    await remover.send({"type": "prompt", "agent_id": stopped, "message": "remember the stopped one"})
    request = (await remover.until_type("permission_request"))[-1]
    await remover.send(
        {
            "type": "permission_response",
            "agent_id": stopped,
            "request_id": request["request_id"],
            "decision": "allow",
        }
    )
    await remover.idle(agent_id=stopped)
    resp, _ = await remover.request({"type": "agent.terminate", "id": "t", "agent_id": stopped})
    assert resp["success"] is True, resp

    running = await create_agent(remover, project)
    _, second = await attach(other, running)
    await other.send({"type": "prompt", "agent_id": running, "message": "remember the running one"})
    await other.until(lambda m: m.get("type") == "permission_request" and m.get("agent_id") == running)

    for agent_id, session in ((stopped, first["session_id"]), (running, second["session_id"])):
        resp, _ = await remover.request(
            {"type": "agent.remove", "id": f"rm-{agent_id}", "agent_id": agent_id}
        )
        assert resp["success"] is True, resp
        assert resp["data"] == {"removed": [agent_id]}
        for client in (remover, other):
            gone = await told_removed(client, agent_id)
            assert gone == {"type": "agent_removed", "agent_id": agent_id, "session_id": session}
    closed = [m for m in other.seen if m["type"] == "permission_resolved" and m.get("agent_id") == running]
    assert [c["source"] for c in closed] == ["abort"], "SIGTERM aborts the turn, which closes it"
    for client in (remover, other):
        resp, _ = await client.request({"type": "agent.list", "id": "l"})
        assert {stopped, running}.isdisjoint(a["agent_id"] for a in resp["data"]["agents"])
    assert runtime_pids(home) == []
    refused, _ = await other.request({"type": "agent.remove", "id": "again", "agent_id": running})
    assert refused["error"]["code"] == "NOT_FOUND", refused

    code, out, err = await run_shard(home, project, "sessions", "--json", "--here")
    assert code == 0, err
    listed = {orjson.loads(line)["session_id"] for line in out.splitlines()}
    assert {first["session_id"], second["session_id"]} <= listed

    for session, said in (
        (first["session_id"], "remember the stopped one"),
        (second["session_id"], "remember the running one"),
    ):
        reopened = await create_agent(remover, project, session_id=session)
        _, sync = await attach(remover, reopened)
        assert sync["session_id"] == session
        assert sync["live_window"]["messages"][0]["content"][0]["text"] == said
    sessions, _ = await remover.request(
        {"type": "session_op", "id": "ls", "agent_id": reopened, "op": "list"}
    )
    assert {first["session_id"], second["session_id"]} <= {
        s["session_id"] for s in sessions["data"]["sessions"]
    }

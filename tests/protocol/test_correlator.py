"""Requests matched to responses by id (``shard.protocol.correlator``): fresh ids out, a response's
data or its refusal in, events and foreign responses left to the caller, open requests failed when
the connection closes; with its own slots and with asyncio futures alike."""

from __future__ import annotations

import asyncio

import pytest

from shard.protocol.correlator import Closed, Correlator, Refused, Slot


def test_each_request_gets_a_fresh_id_and_its_response_its_data():
    calls = Correlator(prefix="w")
    first, one = calls.request({"type": "web.sessions"})
    second, two = calls.request({"type": "web.enroll", "id": "mine"})  # the correlator's id wins
    assert (first, second) == ({"type": "web.sessions", "id": "w1"}, {"type": "web.enroll", "id": "w2"})
    assert calls.pending == 2
    assert calls.feed({"type": "response", "id": "w2", "success": True, "data": {"link": "x"}})
    assert two.done()
    assert not one.done()
    assert two.result() == {"link": "x"}
    assert calls.feed({"type": "response", "id": "w1", "success": True})
    assert one.result() == {}  # no data: an empty dict, never None
    assert calls.pending == 0


def test_events_and_foreign_responses_are_the_callers():
    """Only the awaited response is taken: an event, a response to an id the correlator did not give
    (a command the caller sent itself), and a second response to a settled id are not."""
    calls = Correlator()
    message, answer = calls.request({"type": "agent.list"})
    assert not calls.feed({"type": "status", "id": message["id"], "status": "idle"})
    assert not calls.feed({"type": "response", "id": "run", "success": True})
    assert not calls.feed({"type": "response", "id": 7, "success": True})
    assert not answer.done()
    assert calls.feed({"type": "response", "id": message["id"], "success": True, "data": {"agents": []}})
    assert not calls.feed({"type": "response", "id": message["id"], "success": True, "data": {}})
    assert answer.result() == {"agents": []}


def test_a_refusal_fails_the_future_with_its_code_message_and_data():
    calls = Correlator()
    message, answer = calls.request({"type": "agent.create", "cwd": "/nowhere"})
    error = {"code": "RUNTIME_START_FAILED", "message": "no model", "data": {"agent_id": "agent-1"}}
    calls.feed({"type": "response", "id": message["id"], "success": False, "error": error})
    with pytest.raises(Refused) as refused:
        answer.result()
    assert (refused.value.code, refused.value.message) == ("RUNTIME_START_FAILED", "no model")
    assert refused.value.data == {"agent_id": "agent-1"}
    _, bare = calls.request({"type": "x"})
    calls.feed({"type": "response", "id": "c2", "success": False})  # a refusal that says nothing
    with pytest.raises(Refused) as unsaid:
        bare.result()
    assert (unsaid.value.code, unsaid.value.message, unsaid.value.data) == ("INTERNAL_ERROR", "", {})


def test_closing_fails_what_is_open_and_what_comes_after():
    calls = Correlator()
    message, answered = calls.request({"type": "a"})
    calls.feed({"type": "response", "id": message["id"], "success": True, "data": {"n": 1}})
    _, open_one = calls.request({"type": "b"})
    _, open_two = calls.request({"type": "c"})
    calls.close()
    assert answered.result() == {"n": 1}
    for future in (open_one, open_two):
        with pytest.raises(Closed):
            future.result()
    assert calls.pending == 0
    gone = EOFError("the daemon went away")
    later = Correlator()
    _, waiting = later.request({"type": "d"})
    later.close(gone)
    with pytest.raises(EOFError):
        waiting.result()
    with pytest.raises(EOFError):
        later.request({"type": "e"})


def test_a_slot_read_before_its_answer_says_so():
    with pytest.raises(RuntimeError):
        Slot().result()


async def test_asyncio_futures_are_settled_and_a_cancelled_one_is_skipped():
    """With ``loop.create_future`` the answers are awaited; a future its caller cancelled is left
    alone when its response arrives, and one still open fails when the connection closes."""
    calls = Correlator(asyncio.get_running_loop().create_future)
    first, answer = calls.request({"type": "agent.list"})
    second, given_up = calls.request({"type": "agent.list"})
    _, unanswered = calls.request({"type": "agent.list"})
    given_up.cancel()
    calls.feed({"type": "response", "id": first["id"], "success": True, "data": {"agents": [1]}})
    assert calls.feed({"type": "response", "id": second["id"], "success": True, "data": {}})
    assert await answer == {"agents": [1]}
    assert given_up.cancelled()
    calls.close()
    with pytest.raises(Closed):
        await unanswered

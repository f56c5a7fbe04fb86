"""The pure fold behind the terminal client, driven with plain event objects (no Textual)."""

from __future__ import annotations

from typing import Any

from shard.protocol.agents import Usage
from shard.protocol.events import (
    MessageComplete,
    MessageDelta,
    ModelChanged,
    PermissionRequest,
    PermissionResolved,
    Status,
    Sync,
    ToolCall,
    ToolResult,
    TurnEnd,
    UsageEvent,
)
from shard.tui.view import AgentView, window

A = "agent-1"
DIFF = {"kind": "diff", "path": "a.txt", "hunks": [{"old_start": 1, "old_lines": 1, "new_start": 1,
        "new_lines": 1, "lines": ["-old", "+new"]}]}  # fmt: skip


def sync(messages: list[dict[str, Any]] | None = None, turns: list[Any] | None = None, **extra: Any) -> Sync:
    window: dict[str, Any] = {"messages": messages or [], **({"turns": turns} if turns else {})}
    fields: dict[str, Any] = {
        "agent_id": A, "status": "idle", "mode": "build",
        "live_window": window, "pending_requests": [], **extra,
    }  # fmt: skip
    return Sync.model_validate(fields)


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}]}


def asked(rid: str = "r1") -> PermissionRequest:
    return PermissionRequest(
        agent_id=A, request_id=rid, tool_name="edit", input={}, prompt="Edit?", options=["allow", "deny"]
    )


def test_deltas_stream_into_one_entry_that_the_complete_message_settles():
    """A message's deltas grow one live entry; message_complete replaces it under the same key."""
    view = AgentView(A)
    view.apply(sync([user("u1", "hi")]))
    for piece in ("Hel", "lo"):
        view.apply(MessageDelta(agent_id=A, message_id="m1", block_index=0, kind="text", text_delta=piece))
    live = view.entries()[-1]
    assert (live.key, live.text, live.live) == ("m1:0", "Hello", True)
    message = {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Hello"}]}
    view.apply(MessageComplete.model_validate({"agent_id": A, "message_id": "m1", "message": message}))
    assert [(e.key, e.kind, e.text, e.live) for e in view.entries()] == [
        ("u1:0", "user", "hi", False),
        ("m1:0", "assistant", "Hello", False),
    ]


def test_a_resync_keeps_each_message_once_and_the_cards_render():
    """After a re-attach the fresh sync replaces the window: nothing twice; the tool card keeps the
    diff the live tool_result carried, which the sync's messages cannot.

    Covers: R6.4.18, R6.4.21, R11.0.6
    """
    call = {"type": "tool_call", "id": "t1", "name": "edit", "args": {"path": "a.txt"}}
    result = {"type": "tool_result", "tool_call_id": "t1", "content": {"kind": "text", "text": "ok"}}
    window = [user("u1", "edit"), {"id": "m1", "role": "assistant", "content": [call]}, {
        "id": "u2", "role": "user", "content": [result]}]  # fmt: skip
    view = AgentView(A)
    view.apply(sync(window[:2]))
    view.apply(ToolCall(agent_id=A, tool_call_id="t1", name="edit", args={"path": "a.txt"}))
    view.apply(ToolResult.model_validate({"agent_id": A, "tool_call_id": "t1", "is_error": False,
        "content": {"kind": "text", "text": "ok"}, "render": DIFF}))  # fmt: skip
    before = [e.key for e in view.entries()]
    view.apply(sync(window))
    view.apply(sync(window))
    after = view.entries()
    assert [e.key for e in after] == before == ["u1:0", "tool:t1"]
    card = after[1].card
    assert card is not None
    assert card.done
    assert card.render is not None
    assert card.render.kind == "diff"
    assert view.syncs == 3


def test_pending_requests_are_keyed_and_resolved_by_anyone():
    """The sync's pending request and its re-sent event make one request; permission_resolved from
    any client removes it and says who answered, in words: the other client by the name a person
    knows it by, this one as "this terminal" — in the conversation too, never a connection id.

    Covers: R6.3.6, R6.4.22, R9.5.14
    """
    view = AgentView(A, mine=lambda event: event.source == "unix-client-1")
    view.apply(sync(pending_requests=[asked().to_wire()]))
    view.apply(asked())
    assert list(view.pending) == ["r1"]
    view.apply(asked("r2"))
    browser = {"source": "websocket-client-2", "source_label": "Chrome on Linux"}
    view.apply(PermissionResolved(agent_id=A, request_id="r1", decision="allow", **browser))
    here = {"source": "unix-client-1", "source_label": "terminal (pid 7)"}
    view.apply(PermissionResolved(agent_id=A, request_id="r2", decision="deny", **here))
    assert view.pending == {}
    assert view.resolved == {"r1": "Allowed by Chrome on Linux", "r2": "Denied by this terminal"}
    notes = [e.text for e in view.entries() if e.key.startswith("resolved:")]
    assert notes == ["edit: Allowed by Chrome on Linux", "edit: Denied by this terminal"]


def test_pickers_follow_the_capabilities_only():
    """No capabilities: no pickers. A catalog without its switch is no picker either; model_changed
    without capabilities leaves them as they were.

    Covers: R9.1.10, R7.10, R10.2.4
    """
    view = AgentView(A)
    view.apply(sync())
    assert view.pickers() == {"mode": False, "model": False, "reasoning": False}
    view.apply(sync(capabilities=["mode-catalog", "model-catalog", "model-switch"]))
    assert view.pickers() == {"mode": False, "model": True, "reasoning": False}
    model = {"id": "t/m", "provider": "t", "model": "m"}
    view.apply(ModelChanged.model_validate({"agent_id": A, "previous": model, "active": model}))
    assert view.pickers() == {"mode": False, "model": True, "reasoning": False}
    assert view.model == "t/m"


def test_an_answer_from_another_epoch_or_connection_is_stale():
    """A catalog asked for under (generation, runtime_epoch) applies only while both are unchanged.

    Covers: R9.1.17
    """
    view = AgentView(A)
    view.apply(sync(runtime_epoch=0))
    token = view.token(1)
    assert view.current(token, 1)
    assert not view.current(token, 2)  # reconnected meanwhile
    view.apply(sync(runtime_epoch=1))  # a replacement runtime took over
    assert not view.current(token, 1)


def test_turn_usage_follows_its_turn():
    """Live from ``turn_end``, and from the re-sync's ``turns`` (which carry it since issue 26).

    Covers: R9.4.2, R6.4.21
    """
    view = AgentView(A)
    view.apply(sync([user("u1", "hi")]))
    view.apply(TurnEnd.model_validate({"agent_id": A, "turn_id": "t1", "usage": {"input": 5, "output": 2}}))
    assert [e.key for e in view.entries()] == ["u1:0", "usage:t1"]
    turn = {"turn_id": "t1", "last_message_id": "u1", "usage": {"input": 5, "output": 2}}
    view.apply(sync([user("u1", "hi"), user("u2", "again")], turns=[turn]))
    assert [e.key for e in view.entries()] == ["u1:0", "usage:t1", "u2:0"]
    assert view.headline("reconnecting…") == "agent-1 · idle · reconnecting… · mode build"


def test_the_status_line_says_the_window_and_where_it_came_from():
    """Issue 27: the model's context window in use and its source — from the sync's model, then
    from each usage event (a window learnt from the server after the sync), or a model switch; a
    turn's notice counts every input token, cached ones included."""
    view = AgentView(A)
    model = {"id": "local/qwen", "provider": "local", "model": "qwen"}
    view.apply(sync([user("u1", "hi")], model=model))
    assert view.headline("connected") == "agent-1 · idle · mode build · model local/qwen"
    usage = {"input": 10, "output": 5, "cache_read": 2164, "context_tokens": 2179}
    view.apply(
        UsageEvent.model_validate(
            {"agent_id": A, **usage, "context_window": 8192, "context_window_source": "server"}
        )
    )
    assert view.headline("connected").endswith("model local/qwen (window 8,192 from the server)")
    view.apply(TurnEnd.model_validate({"agent_id": A, "turn_id": "t1", "usage": usage}))
    # every input token (2,174), with its unit (issue 26 item 10)
    assert view.entries()[-1].text == "turn done · 2.17k in / 5 out tokens", view.entries()
    other = {**model, "id": "local/big", "context_window": 32768, "context_window_source": "config"}
    view.apply(ModelChanged.model_validate({"agent_id": A, "previous": model, "active": other}))
    assert view.headline("connected").endswith("model local/big (window 32,768 from config.toml)")
    view.apply(sync(model=other))
    assert view.headline("connected").endswith("model local/big (window 32,768 from config.toml)")


def test_a_long_conversation_shows_its_end_and_says_what_is_left_out():
    view = AgentView(A)
    view.apply(sync([user(f"u{i}", f"message {i}") for i in range(1000)]))
    shown = window(view.entries(), 300)
    assert len(shown) == 301
    assert shown[0].text.startswith("… 700 earlier entries not shown (F6 shows more)")
    assert shown[1].key == "u700:0"
    assert shown[-1].text == "message 999"
    assert window(shown[1:], 300) == shown[1:]


def test_a_turns_usage_reads_with_units():
    """A turn's tokens read as 253M / 1.05k, not 253437200 (issue 26 item 10)."""
    view = AgentView(A)
    view.apply(sync([user("u1", "hi")]))
    view.apply(TurnEnd(agent_id=A, turn_id="t1", usage=Usage(input=253_437_200, output=1049)))
    assert [e.text for e in view.entries()][-1] == "turn done · 253M in / 1.05k out tokens"


def test_a_retry_is_kept_until_the_status_moves_on():
    """A ``status`` whose detail says the agent waits for a provider retry is kept for the screen;
    a sync taken mid-wait carries it too; the next status without detail clears it."""
    retrying = "retrying in 2.5 s: connection refused (attempt 2 of 5)"
    view = AgentView(A)
    view.apply(sync())
    view.apply(Status(agent_id=A, status="streaming", detail=retrying))
    assert (view.status, view.status_detail) == ("streaming", retrying)
    view.apply(Status(agent_id=A, status="streaming"))
    assert view.status_detail is None
    view.apply(sync(status="streaming", status_detail=retrying))  # attached mid-wait
    assert view.status_detail == retrying
    view.apply(Status(agent_id=A, status="idle"))
    assert view.status_detail is None


def test_the_queue_is_replaced_whole_and_hand_backs_wait_for_the_prompt_box():
    """``sync.queue`` and each ``queue_changed`` replace the queue (whatever was missed between);
    messages handed back collect in ``returned`` with why, for the app to put back.

    Covers: R6.4.20, R9.2.7
    """
    from shard.protocol.queue import QueueChanged

    item = {"queue_id": "queue-1", "message": "then the tests", "behavior": "follow_up", "queued_at": 1.0}
    view = AgentView(A)
    view.apply(sync(queue=[item]))
    assert [q.message for q in view.queue] == ["then the tests"]
    view.apply(
        QueueChanged.model_validate({"agent_id": A, "queue": [], "reason": "aborted", "returned": [item]})
    )
    assert view.queue == []
    assert [(q.message, why) for q, why in view.returned] == [("then the tests", "aborted")]
    view.apply(sync())
    assert view.queue == []

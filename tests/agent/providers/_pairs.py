"""What the OpenAI and Anthropic APIs require of tool calls in a request body, as assertions: every
call answered before anything else is said, and no answer without its call (else HTTP 400)."""

from __future__ import annotations

from typing import Any


def assert_openai_pairs(messages: list[dict[str, Any]]) -> None:
    """Chat Completions: each assistant ``tool_calls`` id is answered by a ``role: "tool"`` message
    in the run of tool messages right after it (before any user or assistant message), and every
    tool message answers a call of the assistant message before that run."""
    calls: set[str] = set()
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            assert message["tool_call_id"] in calls, f"message {i}: a result without its call: {message}"
            calls.discard(message["tool_call_id"])
            continue
        assert not calls, f"message {i} ({message['role']}) comes before the results of {sorted(calls)}"
        if message["role"] == "assistant":
            calls = {c["id"] for c in message.get("tool_calls") or []}
    assert not calls, f"the request ends before the results of {sorted(calls)}"


def assert_anthropic_pairs(turns: list[dict[str, Any]]) -> None:
    """Messages API: each assistant ``tool_use`` is answered by a ``tool_result`` at the start of the
    next (user) turn, and every ``tool_result`` answers a ``tool_use`` of the turn right before it."""
    for i, turn in enumerate(turns):
        blocks = turn["content"] if isinstance(turn["content"], list) else []
        if turn["role"] == "assistant":
            uses = {b["id"] for b in blocks if b["type"] == "tool_use"}
            if not uses:
                continue
            assert i + 1 < len(turns), f"the request ends before the results of {sorted(uses)}"
            following = turns[i + 1]
            assert following["role"] == "user", f"turn {i + 1} is not the user turn answering {uses}"
            leading = []
            for block in following["content"]:
                if block["type"] != "tool_result":
                    break
                leading.append(block["tool_use_id"])
            assert sorted(leading) == sorted(uses), f"turn {i + 1} answers {leading}, not {sorted(uses)}"
        else:
            asked = set()
            if i > 0 and turns[i - 1]["role"] == "assistant":
                asked = {b["id"] for b in turns[i - 1]["content"] if b["type"] == "tool_use"}
            for block in blocks:
                if block["type"] == "tool_result":
                    assert block["tool_use_id"] in asked, f"turn {i}: a result without its call: {block}"


def tool_texts(messages: list[dict[str, Any]]) -> dict[str, str]:
    """OpenAI body: each tool message's text by its call id."""
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def tool_result_texts(turns: list[dict[str, Any]]) -> dict[str, str]:
    """Anthropic body: each tool_result's text by its call id."""
    out = {}
    for turn in turns:
        for block in turn["content"] if isinstance(turn["content"], list) else []:
            if block["type"] == "tool_result":
                content = block.get("content")
                out[block["tool_use_id"]] = content if isinstance(content, str) else str(content)
    return out

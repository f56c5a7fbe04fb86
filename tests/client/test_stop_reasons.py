"""The SDK's conversation fold and turn result say why each reply ended (``Message.stop_reason``):
the same from a live ``message_complete`` and from a re-attach's ``sync`` window; a message without
the field (recorded before it existed) reads as completed."""

from __future__ import annotations

from typing import Any

from shard.client import Transcript, TurnResult
from shard.client.transcript import stop_note, stop_reason
from shard.protocol.content import Message
from shard.protocol.events import MessageComplete, Sync


def _reply(mid: str, **stop: Any) -> dict[str, Any]:
    return {"id": mid, "role": "assistant", "content": [{"type": "text", "text": "so far"}], **stop}


def test_the_fold_keeps_why_each_reply_ended_live_and_after_a_resync():
    """Covers: R9.4.8, R9.1.4"""
    aborted = _reply("m1", stop_reason="aborted")
    live = Transcript()
    live.apply(MessageComplete.model_validate({"message_id": "m1", "message": aborted}))
    resynced = Transcript()
    window = {"messages": [aborted, _reply("m2")]}
    resynced.apply(
        Sync.model_validate(
            {"status": "idle", "mode": "build", "pending_requests": [], "live_window": window}
        )
    )
    for transcript in (live, resynced):
        assert stop_reason(transcript.messages[0]) == "aborted"
        assert stop_note(transcript.messages[0]) == "stopped by you"
    assert stop_reason(resynced.messages[1]) == "completed"
    assert stop_note(resynced.messages[1]) is None


def test_each_reason_reads_in_words_and_a_turn_result_gives_its_last_replys():
    words = {
        "completed": None,
        "aborted": "stopped by you",
        "interrupted": "interrupted",
        "max_tokens": "cut off: max tokens",
        "failed": "failed: HTTP 503",
        "a_newer_reason": "a_newer_reason",
    }
    for reason, said in words.items():
        message = Message.model_validate(_reply("m", stop_reason=reason, stop_detail="HTTP 503"))
        assert stop_note(message) == said
        assert TurnResult(messages=[message]).stop_reason == reason
    assert TurnResult().stop_reason == "completed"

"""TurnWatch (shard.acp.stops): a prompt's turn, folded from our events to ACP's stop reason. The
module is imported by the tests, not at the top: it imports the ACP SDK, which every xdist worker
collecting the suite would pay for."""

from __future__ import annotations

from shard.protocol.content import Message, TextBlock
from shard.protocol.events import ErrorEvent, MessageComplete, Sync, TurnEnd, TurnStart


def _user(text: str, id_: str = "m-u") -> MessageComplete:
    return MessageComplete(
        message_id=id_, message=Message(id=id_, role="user", content=[TextBlock(text=text)])
    )


def _sync(status: str) -> Sync:
    return Sync(status=status, mode="build", live_window={"messages": []}, pending_requests=[])


def test_the_turn_that_delivers_the_prompt_ends_it():
    from shard.acp.stops import Seen, TurnWatch

    watch = TurnWatch("mine")
    assert watch.feed(TurnStart(turn_id="turn-other")) is None
    assert watch.feed(_user("someone else's")) is None  # another client's prompt: not ours
    assert watch.feed(TurnEnd(turn_id="turn-other")) is None  # its turn ends: ours has not started
    assert watch.feed(TurnStart(turn_id="turn-mine")) is None
    assert watch.feed(_user("mine")) is Seen.PROMPT
    assert watch.feed(TurnEnd(turn_id="turn-mine")) is Seen.END
    assert watch.stop == "end_turn"


def test_cancelled_and_cut_replies_have_their_own_stop_reasons():
    from shard.acp.stops import Seen, TurnWatch

    cancelled = TurnWatch("p")
    for event in (TurnStart(turn_id="t"), _user("p")):
        cancelled.feed(event)
    cancelled.cancelled = True
    assert cancelled.feed(TurnEnd(turn_id="t")) is Seen.END
    assert cancelled.stop == "cancelled"

    cut = TurnWatch("p")
    notice = "the reply was cut at the model's output limit (max_tokens 10); what arrived is kept"
    for event in (TurnStart(turn_id="t"), _user("p"), ErrorEvent(code="PROVIDER_ERROR", message=notice)):
        cut.feed(event)
    cut.feed(TurnEnd(turn_id="t"))
    assert cut.stop == "max_tokens"


def test_a_fatal_error_fails_the_prompt_and_a_resync_when_idle_ends_it():
    from shard.acp.stops import Seen, TurnWatch

    watch = TurnWatch("p")
    for event in (TurnStart(turn_id="t"), _user("p")):
        watch.feed(event)
    watch.feed(ErrorEvent(code="SESSION_CORRUPT", message="disk gone", fatal=True))
    assert watch.failure == "disk gone"
    assert watch.feed(_sync("streaming")) is None  # re-attached mid-turn: not over yet
    assert watch.feed(_sync("idle")) is Seen.END


def test_an_idle_sync_before_the_prompt_was_seen_ends_nothing():
    from shard.acp.stops import TurnWatch

    watch = TurnWatch("p")
    assert watch.feed(_sync("idle")) is None
    assert watch.stop is None

"""The Python SDK folds the recorded event streams of tests/fixtures/streams/ (made from a real daemon
by scripts/record_streams.py) into the agent state each file expects, at each of its checkpoints —
the same files and expectations the web client's store is held to (web/test/fixtures.test.ts), so
the two clients cannot drift: a reconnect's replay adds nothing twice, a newer runtime_epoch
replaces the older, the first answer to a request wins, and a queued message shows until delivered."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.client.replay import agent_view, fold, load

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"  # the web store folds them too
FILES = sorted(STREAMS.glob("*.json"))
SCENARIOS = {
    "turn_with_permission",
    "first_response_wins",
    "reconnect_replay",
    "queued_messages",
    "stale_epoch",
}


def test_every_tricky_case_has_a_recorded_stream() -> None:
    assert {f.stem for f in FILES} >= SCENARIOS


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_the_sdk_folds_each_stream_into_the_expected_state(path: Path) -> None:
    stream = load(path)
    assert stream["checkpoints"], path.name
    for checkpoint in stream["checkpoints"]:
        agent = fold(stream["agent_id"], stream["events"][: checkpoint["after"]])
        assert agent_view(agent) == checkpoint["expected"], f"{path.name} after {checkpoint['after']} events"


def test_a_replayed_stream_folds_to_the_same_state_as_the_whole_one() -> None:
    """The reconnect case really replays: the re-attach's sync repeats what the dropped connection
    had streamed, and the fold shows that text once."""
    stream = load(STREAMS / "reconnect_replay.json")
    final = stream["checkpoints"][-1]["expected"]
    texts = [m["text"] for m in final["messages"] if m["role"] == "assistant"]
    assert len(texts) == 1, texts
    assert texts[0].startswith("Streaming slowly"), texts
    syncs = [e for e in stream["events"] if e["type"] == "sync"]
    assert len(syncs) == 2
    assert syncs[1]["streaming"], "the re-attach's sync carries the text so far"

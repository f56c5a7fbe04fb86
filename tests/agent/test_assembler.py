"""MessageAssembler: provider events folded into message_delta events and the final Message."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from shard.agent.assembler import MessageAssembler
from shard.agent.providers.base import (
    ProviderEvent,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from shard.protocol.content import TextBlock, ThinkingBlock, ToolCallBlock
from shard.protocol.events import MessageDelta


def feed_all(asm: MessageAssembler, events: list[ProviderEvent]) -> list[MessageDelta]:
    return [d for d in (asm.feed(e) for e in events) if d is not None]


def client_view(deltas: list[MessageDelta]) -> list[dict[str, Any]]:
    """What a client rebuilds from deltas alone (PROTOCOL §9.4), block by block_index."""
    blocks: dict[int, dict[str, Any]] = {}
    for d in deltas:
        if d.block_index not in blocks:
            assert d.block_index == len(blocks), "a delta skipped a block index"
            blocks[d.block_index] = {"kind": d.kind, "text": "", "id": None, "name": None, "args": ""}
        block = blocks[d.block_index]
        assert block["kind"] == d.kind
        if d.kind == "tool_call":
            if d.tool_call_id is not None:
                block["id"], block["name"] = d.tool_call_id, d.name
            else:
                block["args"] += d.args_delta
        else:
            block["text"] += d.text_delta
    return [blocks[i] for i in range(len(blocks))]


_PIECE = st.text(min_size=1, max_size=6)
_TEXTISH = st.lists(st.tuples(st.sampled_from(["text", "thinking"]), _PIECE), max_size=30)


@given(_TEXTISH)
def test_any_interleaving_of_text_and_thinking_reassembles(pieces: list[tuple[str, str]]) -> None:
    """Covers: R9.4.3, R9.4.4. For any interleaving of text and thinking deltas: each run of one
    kind is one block whose text is the run's concatenation; every delta carries message_id,
    block_index and kind plus the piece as text_delta; deltas alone rebuild the final message."""
    expected: list[tuple[str, str]] = []
    for kind, text in pieces:
        if expected and expected[-1][0] == kind:
            expected[-1] = (kind, expected[-1][1] + text)
        else:
            expected.append((kind, text))

    asm = MessageAssembler("msg-1")
    deltas = feed_all(asm, [TextDelta(t) if k == "text" else ThinkingDelta(t) for k, t in pieces])

    assert len(deltas) == len(pieces)
    for delta, (kind, text) in zip(deltas, pieces, strict=True):
        assert delta.message_id == "msg-1"
        assert delta.kind == kind
        assert delta.text_delta == text
        assert delta.tool_call_id is None
        assert delta.args_delta is None
    message = asm.message()
    assert message.id == "msg-1"
    assert message.role == "assistant"
    got = [("text" if isinstance(b, TextBlock) else "thinking", b.text) for b in message.content]
    assert got == expected
    assert [(b["kind"], b["text"]) for b in client_view(deltas)] == expected


def test_text_delta_wire_shape() -> None:
    """Covers: R9.4.3, R9.4.4. A text delta on the wire is exactly {type, message_id, block_index,
    kind, text_delta}."""
    delta = MessageAssembler("msg-9").feed(TextDelta("Hel"))
    assert delta is not None
    wire = delta.to_wire()
    assert wire == {
        "type": "message_delta",
        "message_id": "msg-9",
        "block_index": 0,
        "kind": "text",
        "text_delta": "Hel",
    }


def test_tool_call_deltas_carry_id_and_name_then_args_fragments() -> None:
    """Covers: R9.4.3, R9.4.5, R9.4.6. The first tool_call delta has tool_call_id and name and no
    args; later ones have only args_delta; the fragments concatenate to the block's args."""
    asm = MessageAssembler("msg-1")
    deltas = feed_all(
        asm,
        [
            TextDelta("Let me look."),
            ToolCallStart("tc-1", "read"),
            ToolCallArgs('{"pa'),
            ToolCallArgs('th": "a.py", "limit"'),
            ToolCallArgs(": 5}"),
            Stop("tool_use"),
        ],
    )

    first, *later = deltas[1:]
    assert (first.kind, first.block_index, first.tool_call_id, first.name) == ("tool_call", 1, "tc-1", "read")
    assert first.args_delta is None
    assert first.text_delta is None
    assert [(d.kind, d.block_index, d.tool_call_id, d.name) for d in later] == [
        ("tool_call", 1, None, None)
    ] * 3
    args_text = "".join(d.args_delta or "" for d in later)
    assert orjson.loads(args_text) == {"path": "a.py", "limit": 5}

    message = asm.message()
    assert message.content == [
        TextBlock(text="Let me look."),
        ToolCallBlock(id="tc-1", name="read", args={"path": "a.py", "limit": 5}),
    ]
    [call] = asm.tool_calls()
    assert (call.id, call.name, call.args, call.args_error) == (
        "tc-1",
        "read",
        {"path": "a.py", "limit": 5},
        None,
    )
    assert asm.stop == "tool_use"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@given(args=st.dictionaries(st.text(max_size=6), _JSON, max_size=4), data=st.data())
def test_args_split_anywhere_reassemble(args: dict[str, Any], data: st.DataObject) -> None:
    """Covers: R9.4.6. Whatever the cut points of the JSON text, the args_delta fragments
    concatenate to text that parses as the args, and the assembled call has exactly those args."""
    text = orjson.dumps(args).decode()
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=6)))
    bounds = [0, *cuts, len(text)]
    fragments = [text[a:b] for a, b in itertools.pairwise(bounds)]

    asm = MessageAssembler("msg-1")
    deltas = feed_all(asm, [ToolCallStart("tc-7", "edit"), *(ToolCallArgs(f) for f in fragments)])

    assert orjson.loads("".join(d.args_delta or "" for d in deltas[1:])) == args
    [call] = asm.tool_calls()
    assert call.args == args
    assert call.args_error is None
    assert client_view(deltas)[0]["args"] == text


def test_tool_call_start_always_opens_a_block_and_text_after_it_is_new() -> None:
    """Checks block boundaries: consecutive tool calls are separate blocks, and text after a tool
    call opens a new text block rather than continuing the earlier one."""
    asm = MessageAssembler("msg-1")
    deltas = feed_all(
        asm,
        [
            TextDelta("a"),
            ToolCallStart("tc-1", "ls"),
            ToolCallStart("tc-2", "ls"),
            TextDelta("b"),
            TextDelta("c"),
        ],
    )
    assert [d.block_index for d in deltas] == [0, 1, 2, 3, 3]
    assert asm.message().content == [
        TextBlock(text="a"),
        ToolCallBlock(id="tc-1", name="ls", args={}),
        ToolCallBlock(id="tc-2", name="ls", args={}),
        TextBlock(text="bc"),
    ]
    assert [(c.id, c.args, c.args_error) for c in asm.tool_calls()] == [
        ("tc-1", {}, None),
        ("tc-2", {}, None),
    ]


def test_invalid_or_non_object_args_are_reported() -> None:
    """Checks args_error: invalid JSON and a JSON non-object are reported with their args as {},
    while whitespace-only args mean no arguments."""
    asm = MessageAssembler("msg-1")
    feed_all(
        asm,
        [
            ToolCallStart("tc-1", "read"),
            ToolCallArgs('{"path": '),
            ToolCallStart("tc-2", "read"),
            ToolCallArgs("[1, 2]"),
            ToolCallStart("tc-3", "read"),
            ToolCallArgs("  "),
        ],
    )
    bad_json, not_object, blank = asm.tool_calls()
    assert bad_json.args == {}
    assert bad_json.args_error is not None
    assert "not valid JSON" in bad_json.args_error
    assert not_object.args == {}
    assert not_object.args_error == "the arguments must be a JSON object"
    assert (blank.args, blank.args_error) == ({}, None)
    assert [b.args for b in asm.message().content if isinstance(b, ToolCallBlock)] == [{}, {}, {}]


def test_args_without_an_open_tool_call_are_dropped() -> None:
    """Checks that argument fragments with no tool call open (none yet, or text since) emit nothing
    and change nothing."""
    asm = MessageAssembler("msg-1")
    assert asm.feed(ToolCallArgs('{"x": 1}')) is None
    assert asm.empty
    asm.feed(ToolCallStart("tc-1", "ls"))
    asm.feed(TextDelta("hi"))
    assert asm.feed(ToolCallArgs('{"x": 1}')) is None
    assert asm.tool_calls()[0].args == {}


def test_usage_and_stop_are_recorded_without_deltas() -> None:
    """Checks that usage and stop events emit no delta and are kept on the assembler."""
    asm = MessageAssembler("msg-1")
    usage = UsageReport(input=10, output=3, context_tokens=13)
    assert asm.feed(usage) is None
    assert asm.feed(Stop("max_tokens")) is None
    assert asm.usage == usage
    assert asm.stop == "max_tokens"
    assert asm.empty
    assert asm.message().content == []


def test_thinking_signature_is_kept_on_the_block() -> None:
    """Checks that a thinking signature (even one arriving on an empty delta) is kept on the
    thinking block for the provider's next request, and an empty delta emits nothing."""
    asm = MessageAssembler("msg-1")
    assert asm.feed(ThinkingDelta("hmm")) is not None
    assert asm.feed(ThinkingDelta("", signature="sig-123")) is None
    [block] = asm.message().content
    assert isinstance(block, ThinkingBlock)
    assert block.to_wire() == {"type": "thinking", "text": "hmm", "signature": "sig-123"}


def test_message_mid_stream_is_a_valid_snapshot() -> None:
    """Checks that message() is usable mid-stream (aborted turn): partial args become {}, and
    later calls see later content."""
    asm = MessageAssembler("msg-1")
    asm.feed(TextDelta("par"))
    assert asm.message().content == [TextBlock(text="par")]
    asm.feed(ToolCallStart("tc-1", "read"))
    asm.feed(ToolCallArgs('{"path"'))
    assert asm.message().content[1] == ToolCallBlock(id="tc-1", name="read", args={})
    asm.feed(ToolCallArgs(': "x"}'))
    assert asm.message().content[1] == ToolCallBlock(id="tc-1", name="read", args={"path": "x"})


def test_empty_deltas_open_no_block() -> None:
    """An empty text or thinking delta opens no block, so the final message never holds a block no
    delta announced; a thinking signature with no text still attaches to the thinking block."""
    asm = MessageAssembler("msg-e")
    deltas = feed_all(
        asm,
        [
            TextDelta(""),
            ThinkingDelta("plan"),
            ThinkingDelta("", signature="sig-1"),
            TextDelta(""),
            TextDelta("answer"),
        ],
    )
    message = asm.message()
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert [d.block_index for d in deltas] == [0, 1]
    assert message.content[0].signature == "sig-1"
    assert MessageAssembler("msg-f").message().content == []


def test_a_call_the_output_limit_cut_is_marked_cut() -> None:
    """Checks that in a reply stopped at max_tokens a call whose arguments do not parse, and a last
    call that got no arguments at all, are cut, while a whole call before them is not; and that
    the same arguments under another stop are only bad arguments, not a cut."""
    events: list[ProviderEvent] = [
        ToolCallStart("tc-1", "read"),
        ToolCallArgs('{"path": "a"}'),
        ToolCallStart("tc-2", "ls"),
        ToolCallArgs("{"),
    ]
    cut = MessageAssembler("msg-1")
    feed_all(cut, [*events, Stop("max_tokens")])
    assert [call.cut for call in cut.tool_calls()] == [False, True]
    no_args = MessageAssembler("msg-2")
    feed_all(no_args, [ToolCallStart("tc-3", "ls"), Stop("max_tokens")])
    assert [call.cut for call in no_args.tool_calls()] == [True]
    finished = MessageAssembler("msg-3")
    feed_all(finished, [*events, Stop("tool_use")])
    assert [(call.cut, call.args_error is None) for call in finished.tool_calls()] == [
        (False, True),
        (False, False),
    ]

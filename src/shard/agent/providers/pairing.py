"""Every tool call answered, every result called for: the conversation a provider is sent (pure).

Both APIs reject with HTTP 400 a conversation in which a tool call is not answered before the next
message — OpenAI wants each ``tool_calls`` id answered by a ``role: "tool"`` message right after the
assistant message, Anthropic each ``tool_use`` answered by a ``tool_result`` at the start of the next
user turn — and one holding a result whose call is not right before it. Shard's sessions keep to
that (a turn records a result for every call, an aborted one too; fork takes the results along; a
restore closes what a dead runtime left open), but a conversation can still come without it: an old
session, a crash in a version that did not close its calls, a hand-edited file. One bad pair would
fail every later request of the session, so both adapters send :func:`paired` messages:

* each assistant message's calls are followed at once by their results, in call order (a result
  recorded later, after a steer say, moves up to its call); a call without a result gets an error
  result, :data:`UNANSWERED`, that tells the model it did not run;
* a result whose call is not in the assistant message before it (an orphan) is left out: the model
  has nothing to read it against.

A conversation that is already consistent comes back with the same messages in the same order.
"""

from __future__ import annotations

from shard.protocol.content import ErrorContent, Message, ToolCallBlock, ToolResultBlock

UNANSWERED = (
    "This tool call did not run to completion: the conversation was interrupted before its result "
    "was recorded (an abort, a crash or a restart). It may not have run, or may have done part of "
    "its work; check before relying on its effects."
)


def paired(messages: list[Message]) -> list[Message]:
    """``messages`` with every tool call followed by its result and no result without its call."""
    out: list[Message] = []
    calls: list[str] = []  # the calls of the last assistant message, in order
    results: dict[str, Message] = {}  # their results found so far
    rest: list[Message] = []  # the other user messages since that assistant message

    def close() -> None:
        out.extend(results.get(call) or _unanswered(call) for call in calls)
        out.extend(rest)

    for message in messages:
        if message.role == "assistant":
            close()
            out.append(message)
            calls = [b.id for b in message.content if isinstance(b, ToolCallBlock)]
            results, rest = {}, []
            continue
        answers = [b for b in message.content if isinstance(b, ToolResultBlock)]
        for block in answers:
            if block.tool_call_id in calls and block.tool_call_id not in results:
                alone = len(message.content) == 1
                results[block.tool_call_id] = message if alone else _result(message.id, block)
        others = [b for b in message.content if not isinstance(b, ToolResultBlock)]
        if others:
            rest.append(message if not answers else Message(id=message.id, role="user", content=others))
    close()
    return out


def _result(message_id: str, block: ToolResultBlock) -> Message:
    return Message(id=f"{message_id}:{block.tool_call_id}", role="user", content=[block])


def _unanswered(call_id: str) -> Message:
    block = ToolResultBlock(tool_call_id=call_id, content=ErrorContent(message=UNANSWERED), is_error=True)
    return Message(id=f"unanswered:{call_id}", role="user", content=[block])

"""The queue above the prompt box (the additive ``queue_changed`` / ``sync.queue`` / ``unqueue``):
one line per message waiting to be delivered, saying how it waits, and how to take the last one back
(F7, into the prompt box to edit or drop). A message the agent handed back instead of delivering it
(an abort, a failed turn, a runtime gone) goes back into the prompt box too: after what is typed
there, never in its place."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Input, Static

from shard.client import Agent, CommandError, ShardClientError
from shard.tui.view import AgentView

_HOW = {"steer": "steer", "follow_up": "after this turn"}
WHY = {
    "aborted": "the turn was aborted",
    "turn_failed": "the turn failed before it",
    "agent_failed": "the agent stopped on an error",
    "runtime_exited": "the agent's runtime exited",
}


class QueueLine(Static):
    DEFAULT_CSS = """
    QueueLine { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__(id="queue")
        self.display = False

    def show(self, view: AgentView) -> None:
        self.display = bool(view.queue)
        if not view.queue:
            return
        text = Text()
        for item in view.queue:
            text.append("queued ", style="bold")
            text.append(f"({_HOW.get(item.behavior, item.behavior)}) ")
            text.append(one_line(item.message) + "\n")
        if view.supports("message-queue"):
            text.append("F7 takes the last one back into the prompt box", style="italic")
        text.rstrip()
        self.update(text)


def one_line(text: str) -> str:
    """The prompt box is one line: a message's lines joined by spaces."""
    return " ".join(text.split())


def put_back(box: Input, message: str) -> None:
    """``message`` into the prompt box, after what is typed there."""
    typed = box.value.rstrip()
    box.value = f"{typed} {one_line(message)}" if typed else one_line(message)
    box.cursor_position = len(box.value)


def take_back_returned(view: AgentView, box: Input) -> str | None:
    """The messages ``view`` was handed back, into the prompt box; what to tell the person."""
    if not view.returned:
        return None
    for item, _ in view.returned:
        put_back(box, item.message)
    reasons = ", ".join(sorted({WHY.get(reason, reason) for _, reason in view.returned}))
    count, view.returned[:] = len(view.returned), []
    if count == 1:
        return f"A queued message was not sent ({reasons}): it is back in the prompt box"
    return f"{count} queued messages were not sent ({reasons}): they are back in the prompt box"


async def withdraw_last(agent: Agent, view: AgentView, box: Input) -> str | None:
    """F7: the last queued message withdrawn and back in the prompt box, to edit or drop; what to
    tell the person when it could not be (delivery wins: a message delivered meanwhile stays so)."""
    if not view.queue:
        return None
    try:
        withdrawn = await agent.unqueue(view.queue[-1].queue_id)
    except CommandError as exc:
        return "too late: it was delivered" if exc.code == "NOT_FOUND" else str(exc)
    except ShardClientError as exc:
        return f"not withdrawn: {exc}"
    put_back(box, withdrawn.message)
    return None

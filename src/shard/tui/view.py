"""The pure view model of one agent: a fold of its protocol events into what the terminal shows.

``AgentView.apply(event)`` is the only way state changes; the widgets read the result. It imports
no Textual and no asyncio, so tests drive it with plain event objects. What it keeps, and why:

* status, mode, model, capabilities, pending requests, the queue and the conversation are the SDK's
  own fold, :class:`~shard.client.agent_state.AgentState`, which this view extends (``sync`` is
  authoritative: a re-attach folds the new ``sync`` and the events after it, each exactly once,
  PROTOCOL §6.4);
* tool cards are keyed by ``tool_call_id``: the live ``tool_call`` / ``tool_result`` /
  ``permission_resolved`` events fill them, and a ``sync``'s window fills them the same (its blocks
  carry the RenderDescriptors, exit codes, durations and permission answers the events did), so a
  card looks the same live and after a re-attach; each turn's usage follows the turn's last message
  (the SDK transcript's ``turns``, live and from ``sync`` alike);
* pending permission / UI requests are keyed by ``request_id``, so ``sync.pending_requests`` and a
  re-sent ``permission_request`` make one dialog, and a ``*_resolved`` from any client removes it
  (first response wins, §6.3);
* the queue (what waits to be delivered) is replaced whole by ``sync`` and each ``queue_changed``;
  messages handed back instead of delivered wait in ``returned`` until the app puts them back in
  the prompt box;
* controls follow ``sync.capabilities`` only, never the protocol version (R9.1.10, R7.10), and a
  catalog answered under another ``runtime_epoch`` or connection generation is discarded (R9.1.17).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from shard.client.agent_state import AgentState
from shard.client.answers import resolution_text
from shard.client.transcript import stop_note
from shard.protocol import words
from shard.protocol.content import (
    ErrorContent,
    Message,
    TextBlock,
    TextContent,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultContent,
)
from shard.protocol.events import (
    AgentEvent,
    ErrorEvent,
    PermissionRequest,
    PermissionResolved,
    Sync,
    ToolCall,
    ToolResult,
    UiResolved,
)
from shard.protocol.figures import tokens_in, window_said
from shard.protocol.live_window import TurnSummary
from shard.protocol.permissions import ResolvedPermission
from shard.protocol.queue import QueueChanged, QueuedMessage
from shard.protocol.render import RenderDescriptor
from shard.protocol.words import tokens

Kind = Literal["user", "assistant", "thinking", "tool", "notice", "error"]
Token = tuple[int, int | None]  # (connection generation, runtime_epoch) a request was sent under
Resolution = PermissionResolved | UiResolved
Answer = Resolution | ResolvedPermission  # a resolution event, or the answer a synced call keeps
ME = "this terminal"  # who the viewer is, in "Denied by this terminal"


def terminal_name(pid: int) -> str:
    """What the other clients call this terminal (``client.identify``): "terminal (pid 4242)"."""
    return f"terminal (pid {pid})"


def nobody_here(_event: Answer) -> bool:
    return False


@dataclass
class ToolCard:
    tool_call_id: str
    name: str
    args: dict[str, Any]
    preview: RenderDescriptor | None = None  # the tool_call's start-time render
    render: RenderDescriptor | None = None  # the tool_result's render: supersedes the preview
    result_text: str | None = None
    is_error: bool = False
    exit_code: int | None = None
    duration_ms: float | None = None
    permission: ResolvedPermission | None = None  # how its permission request was answered, by whom
    answered_here: bool = False  # by this terminal: "Allowed by this terminal"
    done: bool = False
    unknown: Any = None  # a RenderDescriptor of a kind this client does not know (R11.0.13)
    version: int = 0  # bumped on every change: the screen re-renders a card only when it moved


@dataclass(frozen=True)
class Entry:
    """One thing shown in the conversation, in order. ``key`` is stable across resyncs."""

    key: str
    kind: Kind
    text: str = ""
    card: ToolCard | None = None
    live: bool = False  # still streaming


@dataclass
class AgentView(AgentState):
    agent_id: str
    cards: dict[str, ToolCard] = field(default_factory=dict)
    resolved: dict[str, str] = field(default_factory=dict)  # request_id -> who answered, in words
    # whether this terminal answered (the app passes ShardClient.answered_here): "… by this terminal"
    mine: Callable[[Answer], bool] = field(default=nobody_here, repr=False, compare=False)
    returned: list[tuple[QueuedMessage, str]] = field(default_factory=list)  # handed back, and why
    # errors, each after the message that was last when it came (None: at the end)
    notices: list[tuple[str | None, Entry]] = field(default_factory=list)
    syncs: int = 0

    # --- the fold ---------------------------------------------------------------------------------

    def apply(self, event: AgentEvent) -> None:
        """The SDK's fold, and what only the terminal shows: cards, who answered, notices, what
        was handed back."""
        if isinstance(event, PermissionResolved | UiResolved):
            self._resolve(event)
        elif isinstance(event, ToolCall):
            card = self._card(event.tool_call_id, event.name, event.args)
            card.preview = event.render or card.preview
            card.version += 1
        elif isinstance(event, ToolResult):
            self._apply_result(event)
        elif isinstance(event, ErrorEvent):
            self._notice(Entry(f"error:{len(self.notices)}", "error", f"{event.code}: {event.message}"))
        elif isinstance(event, QueueChanged):
            self.returned.extend((item, event.reason) for item in event.returned or [])
        super().apply(event)
        if isinstance(event, PermissionResolved) and event.tool_call_id is not None:
            self._answered(event.tool_call_id)

    def _notice(self, entry: Entry) -> None:
        last = self.transcript.messages[-1].id if self.transcript.messages else None
        self.notices.append((last, entry))

    def apply_sync(self, sync: Sync) -> None:
        super().apply_sync(sync)
        self.syncs += 1
        for message in sync.live_window.messages:  # what this client did not see live: from the window
            for block in message.content:
                if isinstance(block, ToolCallBlock):
                    card = self._card(block.id, block.name, block.args)
                    if block.render is not None and card.preview is None:
                        card.preview = block.render
                        card.version += 1
                    if block.permission is not None and card.permission != block.permission:
                        card.permission = block.permission
                        card.answered_here = self.mine(block.permission)
                        card.version += 1
                elif isinstance(block, ToolResultBlock) and block.tool_call_id in self.cards:
                    card = self.cards[block.tool_call_id]
                    if not card.done:
                        self._finish(card, block.is_error is True, block.content, block)

    def _apply_result(self, event: ToolResult) -> None:
        card = self.cards.get(event.tool_call_id) or self._card(event.tool_call_id, "tool", {})
        self._finish(card, event.is_error, event.content, event)

    def _finish(
        self, card: ToolCard, is_error: bool, content: ToolResultContent, result: ToolResult | ToolResultBlock
    ) -> None:
        """The card's result, from a live ``tool_result`` or a ``sync`` window's block alike."""
        card.done = True
        card.is_error = is_error
        card.exit_code = result.exit_code
        card.duration_ms = result.duration_ms
        card.render = result.render
        card.unknown = (result.model_extra or {}).get("unknown_render")  # a kind this client lacks
        card.result_text = _content_text(content)
        card.version += 1

    def _answered(self, tool_call_id: str) -> None:
        """Show on the call's card how its permission request was answered (the transcript keeps the
        answer on the call's block, as a ``sync`` window does)."""
        for message in reversed(self.transcript.messages):
            for block in message.content:
                if isinstance(block, ToolCallBlock) and block.id == tool_call_id:
                    card = self._card(block.id, block.name, block.args)
                    card.permission = block.permission
                    card.answered_here = block.permission is not None and self.mine(block.permission)
                    card.version += 1
                    return

    def _card(self, tool_call_id: str, name: str, args: dict[str, Any]) -> ToolCard:
        card = self.cards.get(tool_call_id)
        if card is None:
            card = self.cards[tool_call_id] = ToolCard(tool_call_id, name, args)
        return card

    def _resolve(self, event: Resolution) -> None:
        """Who answered, in words: on the tool call's card when the request was about one (as after
        a re-attach), else as a notice after the conversation's last message ("ask: Dismissed by
        Chrome on Linux")."""
        request = self.pending.get(event.request_id)  # the fold drops it next
        if request is None:
            return
        text = resolution_text(event, request, mine=self.mine(event), me=ME)
        self.resolved[event.request_id] = text
        if isinstance(event, PermissionResolved) and event.tool_call_id is not None:
            return  # its card says it
        what = request.tool_name if isinstance(request, PermissionRequest) else request.title or request.kind
        self._notice(Entry(f"resolved:{event.request_id}", "notice", f"{what}: {text}"))

    # --- what is shown --------------------------------------------------------------------------------

    @property
    def window(self) -> str | None:
        """The model's context window and where it came from, in words."""
        if not self.context_window:
            return None
        return window_said(self.context_window, self.context_window_source)

    @property
    def busy(self) -> bool:
        return self.status not in (None, "idle")

    def entries(self) -> list[Entry]:
        """The conversation in order: the window's messages (each followed by the notices that came
        after it, then the usage of a turn it ended), the message streaming now, cards the messages
        do not place yet, then the notices."""
        out: list[Entry] = []
        placed: set[str] = set()
        after: dict[str | None, list[Entry]] = {}
        for anchor, notice in self.notices:
            after.setdefault(anchor, []).append(notice)
        for turn in self.transcript.turns:
            after.setdefault(turn.last_message_id, []).append(_usage(turn))
        for message in self.transcript.messages:
            out.extend(self._message_entries(message, placed))
            out.extend(after.pop(message.id, []))
        for message_id, blocks in self.transcript.streaming.items():
            for index in sorted(blocks):
                block = blocks[index]
                key = f"{message_id}:{index}"
                if block.kind == "tool_call" and block.tool_call_id:
                    placed.add(block.tool_call_id)
                    card = self.cards.get(block.tool_call_id) or ToolCard(
                        block.tool_call_id, block.name or "tool", {}
                    )
                    out.append(Entry(key, "tool", block.args_text, card, live=True))
                elif block.kind in ("text", "thinking"):
                    kind: Kind = "assistant" if block.kind == "text" else "thinking"
                    out.append(Entry(key, kind, block.text, live=True))
        out.extend(
            Entry(f"tool:{c.tool_call_id}", "tool", card=c)
            for c in self.cards.values()
            if c.tool_call_id not in placed
        )
        for rest in after.values():  # anchored to a message no longer in the window, or to none
            out.extend(rest)
        return out

    def _message_entries(self, message: Message, placed: set[str]) -> list[Entry]:
        out: list[Entry] = []
        for index, block in enumerate(message.content):
            key = f"{message.id}:{index}"
            if isinstance(block, TextBlock):
                out.append(Entry(key, "user" if message.role == "user" else "assistant", block.text))
            elif isinstance(block, ThinkingBlock):
                out.append(Entry(key, "thinking", block.text))
            elif isinstance(block, ToolCallBlock):
                placed.add(block.id)
                out.append(
                    Entry(f"tool:{block.id}", "tool", card=self._card(block.id, block.name, block.args))
                )
        note = stop_note(message)  # a reply that ended early says so, live and after a re-attach
        if note is not None:
            out.append(Entry(f"{message.id}:stop", "notice", f"⏹ {note[:1].upper()}{note[1:]}"))
        return out

    def headline(self, link: str, *, asked: int = 0) -> str:
        """The status line: agent, status, what waits for an answer (``asked``: the background
        children's requests shown here too), the connection when it is not open, mode, and the model
        with its context window and where that came from — what matters most first, as a narrow
        terminal cuts the end."""
        parts = [self.agent_id, words.status(self.status) or "attaching…"]
        if self.pending or asked:
            parts.append(f"{len(self.pending) + asked} waiting for an answer (ctrl+r)")
        if link != "connected":
            parts.append(link)
        if self.mode:
            parts.append(f"mode {self.mode}")
        if self.model:
            parts.append(f"model {self.model}" + (f" (window {self.window})" if self.window else ""))
        return " · ".join(parts)

    # --- controls (capability gating, stale answers) ------------------------------------------------

    def pickers(self) -> dict[str, bool]:
        """Which pickers exist: a catalog to choose from and the switch to apply it (R9.1.10)."""
        return {
            kind: self.supports(f"{kind}-catalog") and self.supports(f"{kind}-switch")
            for kind in ("mode", "model", "reasoning")
        }

    def token(self, generation: int) -> Token:
        return (generation, self.runtime_epoch)

    def current(self, token: Token, generation: int) -> bool:
        """Whether an answer requested under ``token`` still applies: same connection, same runtime
        (R9.1.17: a superseded runtime's answers are discarded)."""
        return token == self.token(generation)


def window(entries: list[Entry], limit: int) -> list[Entry]:
    """The last ``limit`` entries, after one line saying how many earlier ones are not on screen:
    a long session's live window would otherwise be thousands of widgets."""
    hidden = len(entries) - limit
    if hidden <= 0:
        return entries
    note = Entry("earlier", "notice", f"… {hidden} earlier entries not shown (F6 shows more)")
    return [note, *entries[-limit:]]


def _usage(turn: TurnSummary) -> Entry:
    text = f"turn done · {tokens(tokens_in(turn.usage))} in / {tokens(turn.usage.output)} out tokens"
    return Entry(f"usage:{turn.turn_id}", "notice", text)


def _content_text(content: ToolResultContent) -> str:
    if isinstance(content, TextContent):
        return content.text
    if isinstance(content, ErrorContent):
        return content.message
    return json.dumps(content.value, indent=1, sort_keys=True, default=str)

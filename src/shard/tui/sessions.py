"""The sessions view (F5) and the kill (F8) and remove (Delete) confirmations.

The sessions view lists what the web client lists: ``session_op list`` of the open agent (the saved
sessions of its folder, PROTOCOL §9.2), a fork once, under its source. Enter opens a session as a new
agent on the same folder (``agent.create {cwd, session_id}``, exactly what the web client sends);
``f`` forks the open agent's session at its last message (``session_op fork``) and opens the fork
the same way. The screens return the choice; the app sends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from shard.client import Agent
from shard.protocol.results import ForkResult, SessionListResult

Choice = tuple[Literal["open", "fork"], str]  # ("open", session_id) / ("fork", "")


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    label: str
    fork: bool = False


def session_rows(listing: SessionListResult) -> list[SessionRow]:
    """The rows in the server's order; a fork is listed on its own and under its source by the
    server, and shown once, under its source (as the web client)."""
    forks = {f.session_id for s in listing.sessions for f in s.forks or []}
    rows: list[SessionRow] = []
    for session in listing.sessions:
        if session.session_id in forks:
            continue
        count = f"{session.message_count} message{'' if session.message_count == 1 else 's'}"
        rows.append(SessionRow(session.session_id, f"{session.title} · {count}" if session.title else count))
        rows.extend(
            SessionRow(f.session_id, f"fork of {session.session_id}", fork=True) for f in session.forks or []
        )
    return rows


async def list_sessions(agent: Agent) -> list[SessionRow]:
    return session_rows(SessionListResult.model_validate(await agent.session_op("list")))


async def fork(agent: Agent, from_entry_id: str) -> str:
    """``session_op fork`` at ``from_entry_id``: the new session's id (the source is not changed)."""
    data = await agent.session_op("fork", {"from_entry_id": from_entry_id})
    return ForkResult.model_validate(data).session_id


class SessionsScreen(ModalScreen[Choice | None]):
    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical { width: 90; max-width: 100%; height: auto; max-height: 80%;
                                border: thick $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Close"), Binding("f", "fork", "Fork")]

    def __init__(self, cwd: str, rows: list[SessionRow], current: str | None) -> None:
        super().__init__(id="sessions")
        self.cwd = cwd
        self.rows = rows
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for row in self.rows:
            label = Text("    " if row.fork else "")
            label.append(row.session_id, style="bold")
            label.append(f"  {row.label}", style="dim")
            if row.session_id == self.current:
                label.append("  current", style="reverse")
            options.append(Option(label, id=row.session_id))
        with Vertical():
            yield Label(Text(f"Sessions in {self.cwd}", style="bold"))
            if options:
                yield OptionList(*options, id="session-options")
            else:
                yield Label(Text("No sessions."))
            hint = "Enter: open as a new agent · f: fork this agent's session and open the fork · Esc: close"
            yield Label(Text(hint, style="dim"))

    def on_mount(self) -> None:
        ids = [row.session_id for row in self.rows]
        if self.current in ids:
            self.query_one(OptionList).highlighted = ids.index(self.current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == self.current:
            self.notify("this agent already runs on that session")
        elif event.option.id:
            self.dismiss(("open", event.option.id))

    def action_fork(self) -> None:
        self.dismiss(("fork", ""))

    def action_cancel(self) -> None:
        self.dismiss(None)


class KillConfirm(ModalScreen[bool]):
    """y kills; n or Escape keeps the agent running."""

    DEFAULT_CSS = """
    KillConfirm { align: center middle; }
    KillConfirm > Vertical { width: 70; max-width: 100%; height: auto; border: thick $error;
                             background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("y", "answer(True)", "Kill"), Binding("n,escape", "answer(False)", "Cancel")]

    def __init__(self, label: str) -> None:
        super().__init__(id="kill-confirm")
        self.label = label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Kill {self.label}?", style="bold"))
            yield Label(
                Text("Its runtime stops at once, a running turn with it; the session is kept and the agent")
            )
            yield Label(Text("starts again on the next attach or prompt."))
            yield Label(Text("y: kill · n / Esc: cancel", style="dim"))

    def action_answer(self, kill: bool) -> None:
        self.dismiss(kill)


class RemoveConfirm(ModalScreen[bool]):
    """y removes; n or Escape keeps the agent."""

    DEFAULT_CSS = """
    RemoveConfirm { align: center middle; }
    RemoveConfirm > Vertical { width: 70; height: auto; border: thick $error; background: $surface;
                               padding: 1 2; }
    """
    BINDINGS = [Binding("y", "answer(True)", "Remove"), Binding("n,escape", "answer(False)", "Cancel")]

    def __init__(self, label: str, subagents: int, running: bool) -> None:
        super().__init__(id="remove-confirm")
        self.label = label
        self.subagents = subagents
        self.running = running

    def compose(self) -> ComposeResult:
        kids = (
            f" and its {self.subagents} subagent{'s' if self.subagents > 1 else ''}" if self.subagents else ""
        )
        with Vertical():
            yield Label(Text(f"Remove {self.label}{kids}?", style="bold"))
            if self.running:
                yield Label(Text("Its runtime is stopped first, a running turn with it."))
            yield Label(Text("It leaves the agent list; its session is kept (F5 on an agent of the same"))
            yield Label(Text("folder lists it and opens it again as a new agent)."))
            yield Label(Text("y: remove · n / Esc: cancel", style="dim"))

    def action_answer(self, remove: bool) -> None:
        self.dismiss(remove)

"""The mode, model and reasoning-level pickers: a list of the server's catalog, the active entry
marked. The app opens one only when the agent's capabilities advertise the catalog and the switch
(R9.1.10, R7.10); the options come from the catalog alone, never hard-coded names."""

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
from shard.protocol.commands import ListReasoningLevels, SetReasoningLevel
from shard.protocol.results import ListReasoningLevelsResult

Kind = Literal["mode", "model", "reasoning"]


@dataclass(frozen=True)
class Catalog:
    kind: Kind
    entries: list[tuple[str, str]]  # (id, description), in the server's order
    active: str | None
    model: str | None = None  # reasoning levels belong to a model: set_reasoning_level's precondition


async def fetch(agent: Agent, kind: Kind) -> Catalog:
    """The server's catalog of ``kind`` for ``agent`` (the SDK raises CapabilityMissing first)."""
    if kind == "mode":
        modes = await agent.list_modes()
        return Catalog(kind, [(m.name, m.description) for m in modes.modes], modes.active)
    if kind == "model":
        models = await agent.list_models()
        entries = [(m.id, f"{m.context_window:,} tokens" if m.context_window else "") for m in models.models]
        return Catalog(kind, entries, models.active.id if models.active else None)
    agent.require("reasoning-catalog")
    levels = ListReasoningLevelsResult.model_validate((await agent.send(ListReasoningLevels())).data)
    entries = [(level.id, level.description or level.label) for level in levels.levels]
    return Catalog(kind, entries, levels.active, model=levels.model.id)


async def switch(agent: Agent, catalog: Catalog, choice: str) -> None:
    if catalog.kind == "mode":
        await agent.set_mode(choice)
    elif catalog.kind == "model":
        await agent.set_model(choice)
    else:
        agent.require("reasoning-switch")
        await agent.send(SetReasoningLevel(model=catalog.model or "", effort=choice))


class Picker(ModalScreen[str | None]):
    DEFAULT_CSS = """
    Picker { align: center middle; }
    Picker > Vertical { width: 70; max-width: 100%; height: auto; max-height: 80%; border: thick $accent;
                        background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, entries: list[tuple[str, str]], active: str | None) -> None:
        """``entries``: (id, description) in the server's order."""
        super().__init__(id="picker")
        self.title_text = title
        self.entries = entries
        self.active = active

    def compose(self) -> ComposeResult:
        options = []
        for entry_id, description in self.entries:
            label = Text("● " if entry_id == self.active else "  ")
            label.append(entry_id, style="bold")
            if description:
                label.append(f"  {description}", style="dim")
            options.append(Option(label, id=entry_id))
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield OptionList(*options, id="picker-options")

    def on_mount(self) -> None:
        ids = [e for e, _ in self.entries]
        listing = self.query_one(OptionList)
        if self.active in ids:
            listing.highlighted = ids.index(self.active)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

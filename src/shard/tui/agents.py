"""The agent list (left pane): one option per agent, updated in place from the :class:`Roster`, and
the new-agent field (a working directory, as the web client's form)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from shard.tui.roster import Row


class AgentList(OptionList):
    DEFAULT_CSS = "AgentList { height: 1fr; }"

    def __init__(self) -> None:
        super().__init__(id="agents")
        self._shown: dict[str, Text] = {}
        self.selected: str | None = None

    def _label(self, row: Row) -> Text:
        text = Text("▶ " if row.agent_id == self.selected else "  ")
        text.append(row.line(), style="bold yellow" if row.needs_answer else "")
        text.append(f"\n  {_tail(row.cwd)}", style="dim")
        return text

    def show(self, rows: list[Row]) -> None:
        """Add new rows, update changed ones in place (the highlight stays where it was), drop the
        rows of agents that were removed."""
        for gone in set(self._shown) - {row.agent_id for row in rows}:
            self.remove_option(gone)
            del self._shown[gone]
        for row in rows:
            label = self._label(row)
            known = self._shown.get(row.agent_id)
            if known is None:
                self.add_option(Option(label, id=row.agent_id))
            elif known != label:
                self.replace_option_prompt(row.agent_id, label)
            self._shown[row.agent_id] = label
        if self.highlighted is None and self.option_count:
            self.highlighted = 0  # Enter opens something straight away

    @property
    def highlighted_id(self) -> str | None:
        if self.highlighted is None or not self.option_count:
            return None
        return self.get_option_at_index(self.highlighted).id


class NewAgent(Input):
    """Enter a directory and press Enter: the app creates an agent there and attaches it."""

    def __init__(self, cwd: str) -> None:
        super().__init__(value=cwd, placeholder="new agent: working directory", id="new-agent")


def _tail(path: str, width: int = 28) -> str:
    """The end of a long path: the part that tells projects apart fits the pane."""
    return path if len(path) <= width else "…" + path[-(width - 1) :]

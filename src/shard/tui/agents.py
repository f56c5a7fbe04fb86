"""The agent list (left pane): one line per agent, the most recently active first, updated from the
:class:`Roster` (in place while the order holds; re-ordered with the highlight kept on its agent),
and the new-agent field (a working directory, as the web client's form)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from shard.tui.roster import Row


class AgentList(OptionList):
    DEFAULT_CSS = "AgentList { height: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self) -> None:
        super().__init__(id="agents")
        self._shown: dict[str, Text] = {}
        self.selected: str | None = None

    def _label(self, row: Row) -> Text:
        """Marker, name, state, model on one line: a narrow pane cuts it with an ellipsis, never wraps."""
        text = Text("▶ " if row.agent_id == self.selected else "  ")
        text.append(row.title, style="bold")
        text.append(" · ")
        text.append(row.state, style="bold yellow" if row.needs_answer else "")
        if row.model:
            text.append(f" · {row.model}", style="dim")
        return text

    def show(self, rows: list[Row]) -> None:
        """Show ``rows`` in their order: changed rows are updated in place while the order holds;
        a new order rebuilds the list, the highlight staying on the agent it was on."""
        labels = {row.agent_id: self._label(row) for row in rows}
        if list(labels) != list(self._shown):
            highlighted = self.highlighted_option.id if self.highlighted_option is not None else None
            self.clear_options()
            self.add_options(Option(label, id=agent_id) for agent_id, label in labels.items())
            if highlighted in labels:
                self.highlighted = list(labels).index(highlighted)
        else:
            for agent_id, label in labels.items():
                if self._shown[agent_id] != label:
                    self.replace_option_prompt(agent_id, label)
        self._shown = labels
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

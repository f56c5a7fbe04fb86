"""The conversation pane: one ``Static`` per :class:`~shard.tui.view.Entry`, keyed by the entry's
stable key. An update re-renders only what changed (a delta touches the streaming entry alone), adds
new entries in place and removes those gone from the window — so a resync after a reconnect shows
each message once."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from shard.tui import render
from shard.tui.view import Entry

_UNLAID_WIDTH = 100  # an entry not laid out yet is read at this width


def _dom_id(key: str) -> str:
    return "e-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in key)


class EntryView(Static):
    """One entry on screen: what it shows (a reply as markdown, the rest as styled text)."""

    def __init__(self, item: Entry) -> None:
        self.shown = render.entry(item)
        self.signature = _signature(item)
        super().__init__(self.shown, id=_dom_id(item.key), classes=item.kind)

    @property
    def text(self) -> Text:
        """The entry as text at the pane's width (what tests read; a reply's markdown rendered)."""
        return render.plain(self.shown, self.content_size.width or _UNLAID_WIDTH)

    def change(self, item: Entry) -> None:
        """Re-render only when what the entry shows changed (a delta touches one entry)."""
        signature = _signature(item)
        if signature != self.signature:
            self.shown, self.signature = render.entry(item), signature
            self.update(self.shown)


class Conversation(VerticalScroll):
    DEFAULT_CSS = """
    Conversation { height: 1fr; padding: 0 1; }
    Conversation > EntryView { margin-bottom: 1; }
    Conversation > .tool { border-left: thick $warning; padding-left: 1; }
    """

    def __init__(self) -> None:
        super().__init__(id="conversation")
        self._views: dict[str, EntryView] = {}

    def clear(self) -> None:
        self.remove_children()
        self._views.clear()

    def show(self, entries: list[Entry]) -> None:
        at_end = self.scroll_y >= self.max_scroll_y - 1
        wanted = {e.key for e in entries}
        for key in [k for k in self._views if k not in wanted]:
            self._views.pop(key).remove()
        previous: EntryView | None = None
        for item in entries:
            view = self._views.get(item.key)
            if view is None:
                view = self._views[item.key] = EntryView(item)
                if previous is not None:
                    self.mount(view, after=previous)
                elif self.children:
                    self.mount(view, before=0)
                else:
                    self.mount(view)
            else:
                view.change(item)
            previous = view
        if at_end:
            self.scroll_end(animate=False)

    def texts(self) -> list[Text]:
        """What the pane shows, in screen order."""
        return [child.text for child in self.children if isinstance(child, EntryView)]

    def plain(self) -> list[str]:
        return [text.plain for text in self.texts()]


def _signature(item: Entry) -> tuple[object, ...]:
    """What an entry's look depends on: its text, whether it streams, and its card's version."""
    return (item.kind, item.text, item.live, item.card.version if item.card else None)

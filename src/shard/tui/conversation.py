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


def _dom_id(key: str) -> str:
    return "e-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in key)


class Conversation(VerticalScroll):
    DEFAULT_CSS = """
    Conversation { height: 1fr; padding: 0 1; }
    Conversation > Static { margin-bottom: 1; }
    Conversation > .tool { border-left: thick $warning; padding-left: 1; }
    """

    def __init__(self) -> None:
        super().__init__(id="conversation")
        self._widgets: dict[str, Static] = {}
        self._signatures: dict[str, object] = {}
        self._texts: dict[str, Text] = {}
        self._order: list[str] = []

    def clear(self) -> None:
        self.remove_children()
        self._widgets.clear()
        self._signatures.clear()
        self._texts.clear()

    def show(self, entries: list[Entry]) -> None:
        at_end = self.scroll_y >= self.max_scroll_y - 1
        wanted = {e.key for e in entries}
        for key in [k for k in self._widgets if k not in wanted]:
            self._widgets.pop(key).remove()
            self._signatures.pop(key, None)
            self._texts.pop(key, None)
        previous: Static | None = None
        for item in entries:
            widget = self._widgets.get(item.key)
            # a tool card changes in place (its result arrives later): always re-rendered
            signature: object = render.entry(item) if item.kind == "tool" else (item.text, item.live)
            if widget is None:
                text = signature if isinstance(signature, Text) else render.entry(item)
                widget = Static(text, id=_dom_id(item.key), classes=item.kind)
                self._widgets[item.key] = widget
                if previous is not None:
                    self.mount(widget, after=previous)
                elif self.children:
                    self.mount(widget, before=0)
                else:
                    self.mount(widget)
            elif self._signatures.get(item.key) != _comparable(signature):
                widget.update(signature if isinstance(signature, Text) else render.entry(item))
            self._signatures[item.key] = _comparable(signature)
            self._texts[item.key] = signature if isinstance(signature, Text) else render.entry(item)
            previous = widget
        self._order = [e.key for e in entries]
        if at_end:
            self.scroll_end(animate=False)

    def texts(self) -> list[Text]:
        """What the pane holds, in order, as rendered."""
        return [self._texts[key] for key in self._order if key in self._texts]

    def plain(self) -> list[str]:
        return [text.plain for text in self.texts()]


def _comparable(signature: object) -> object:
    if isinstance(signature, Text):
        return (signature.plain, tuple((s.start, s.end, str(s.style)) for s in signature.spans))
    return signature

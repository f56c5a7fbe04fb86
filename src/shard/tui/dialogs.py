"""Permission and UI request dialogs. They show what the server sent (prompt, details, choices) and
return the user's answer; the app sends it. No policy here: the choices are the server's, and the app
dismisses a dialog whose request another client answered first (PROTOCOL §6.3, §9.5).

Keys: a choice's accelerator (else its number 1 to 9) answers with it; Escape closes a permission
dialog *without* answering (the request stays pending: ctrl+r opens it again) and is a UI dialog's
Dismiss (``value: null``).

Layout: whatever the terminal's size and however long the command or diff, every choice stays on
screen. The dialog is at most the screen's height; the prompt and details scroll in a body that
takes what the choices leave (page up / page down scroll it), and the choices stack one per line
(up / down move between them), a long label wrapping inside its own line.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea

from shard.protocol.events import PermissionRequest, UiRequest
from shard.protocol.permissions import PermissionDetail
from shard.tui import render

# What a dialog returns: ("choice", choice_id) / ("decision", legacy decision) / ("value", ui value)
Answer = tuple[str, Any]

_CSS = """
RequestDialog { align: center middle; }
RequestDialog > #frame {
    width: 100%; max-width: 100; height: auto; max-height: 100%;
    border: round $warning; background: $surface; padding: 0 1;
}
RequestDialog #frame { scrollbar-size-vertical: 1; }
RequestDialog .title { text-style: bold; }
RequestDialog #top { dock: top; height: auto; }
RequestDialog .detail { margin-top: 1; }
RequestDialog #choices { dock: bottom; height: auto; padding-top: 1; }
RequestDialog #choices > Button { width: 100%; text-align: left; content-align: left middle; }
RequestDialog Horizontal { height: auto; margin-top: 1; }
RequestDialog Horizontal > Button { margin-right: 1; }
RequestDialog TextArea { height: 8; }
RequestDialog OptionList { max-height: 50vh; }
RequestDialog .hint { color: $text-muted; }
"""


class RequestDialog(ModalScreen[Answer | None]):
    DEFAULT_CSS = _CSS
    BINDINGS = [Binding("escape", "close", "Close", show=True)]

    def __init__(self, request: PermissionRequest | UiRequest, asker: str | None = None) -> None:
        super().__init__(id=f"request-{request.request_id}")
        self.request = request
        self.asker = asker  # a background child's request shown in its parent's view

    def action_close(self) -> None:
        self.dismiss(None)


class PermissionDialog(RequestDialog):
    request: PermissionRequest
    BINDINGS = [
        Binding("down", "app.focus_next", show=False),
        Binding("up", "app.focus_previous", show=False),
        Binding("pagedown", "scroll(1)", show=False),
        Binding("pageup", "scroll(-1)", show=False),
    ]

    def _choices(self) -> list[tuple[str, str, str]]:
        """(kind, id, label) per button: the request's choices, else its legacy options."""
        if self.request.choices:
            return [("choice", c.id, c.label) for c in self.request.choices]
        return [("decision", d, d.replace("_", " ")) for d in self.request.options]

    def _keys(self) -> dict[str, int]:
        keys: dict[str, int] = {}
        for index, choice in enumerate(self.request.choices or []):
            if choice.accelerator:
                keys.setdefault(choice.accelerator.lower(), index)
        for index in range(min(9, len(self._choices()))):
            keys.setdefault(str(index + 1), index)
        return keys

    def compose(self) -> ComposeResult:
        request = self.request
        keys = {index: key for key, index in reversed(self._keys().items())}  # the accelerator first
        with VerticalScroll(id="frame", can_focus=False):
            with Vertical(id="top"):
                yield Label(Text(f"Permission: {request.tool_name}"), classes="title")
                if self.asker:
                    yield Label(Text(f"Asked by {self.asker}"))
            with Vertical(id="choices"):
                for index, (_kind, _id, label) in enumerate(self._choices()):
                    text = Text(f"[{keys.get(index, ' ')}] ", style="bold")
                    text.append(label)
                    yield Button(text, id=f"choice-{index}", compact=True)
                hint = "Esc: decide later (ctrl+r reopens) · PgUp/PgDn: scroll"
                yield Label(Text(hint), classes="hint")
            yield Static(Text(request.prompt), classes="detail")
            for detail in request.details or []:
                yield Static(_detail(detail), classes="detail")

    def action_scroll(self, pages: int) -> None:
        """Page the prompt and details (the choices stay where they are)."""
        frame = self.query_one("#frame", VerticalScroll)
        if pages > 0:
            frame.scroll_page_down(animate=False)
        else:
            frame.scroll_page_up(animate=False)

    def on_key(self, event: Key) -> None:
        index = self._keys().get((event.character or "").lower())
        if index is not None:
            event.stop()
            self._answer(index)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("choice-"):
            self._answer(int(event.button.id.removeprefix("choice-")))

    def _answer(self, index: int) -> None:
        kind, value, _label = self._choices()[index]
        self.dismiss((kind, value))


class UiDialog(RequestDialog):
    request: UiRequest
    BINDINGS = [Binding("ctrl+s", "submit", "OK", priority=True)]  # the editor's Enter is a newline

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="frame"):
            yield Label(Text(request.title or "The agent asks"), classes="title")
            if self.asker:
                yield Label(Text(f"Asked by {self.asker}"))
            if request.message:
                yield Static(Text(request.message), classes="detail")
            if request.kind == "select":
                yield OptionList(*[Text(o) for o in request.options or []], id="ui-options")
            elif request.kind == "confirm":
                with Horizontal():
                    yield Button("Yes", id="ui-yes")
                    yield Button("No", id="ui-no")
            elif request.kind == "editor":
                yield TextArea(request.prefill or "", id="ui-editor")
            elif request.kind != "notify":
                yield Input(value=request.prefill or "", placeholder=request.placeholder or "", id="ui-input")
            keys = "ctrl+s: OK · Esc: dismiss" if request.kind == "editor" else "Esc: dismiss"
            yield Label(Text(keys), classes="hint")

    def action_close(self) -> None:
        self.dismiss(("value", None))  # Escape is Dismiss: the tool is told there was no answer

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(("value", (self.request.options or [])[event.option_index]))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(("value", "yes" if event.button.id == "ui-yes" else "no"))

    def action_submit(self) -> None:
        if self.request.kind == "editor":
            self.dismiss(("value", self.query_one(TextArea).text))
        elif self.request.kind == "input":
            self.dismiss(("value", self.query_one(Input).value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(("value", event.value))


def _detail(detail: PermissionDetail) -> Text:
    """One detail: its label, then its value — under the label when it runs over several lines (a
    diff, a script); a unified diff coloured as the tool cards colour one."""
    out = Text()
    out.append(f"{detail.label}:" if detail.label else "", style="bold")
    value = detail.value.rstrip("\n")
    several = "\n" in value
    if detail.label:
        out.append("\n" if several else " ")
    if several and value.startswith("--- "):
        return out.append_text(render.unified_diff(value))
    return out.append(value, style="cyan" if detail.format in ("command", "code", "path") else "")

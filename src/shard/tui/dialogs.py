"""Permission and UI request dialogs. They show what the server sent (prompt, details, choices) and
return the user's answer; the app sends it. No policy here: the choices are the server's, and the app
dismisses a dialog whose request another client answered first (PROTOCOL §6.3, §9.5).

Keys: a choice's accelerator (else its number 1 to 9) answers with it; Escape closes a permission
dialog *without* answering (the request stays pending: ctrl+r opens it again) and is a UI dialog's
Dismiss (``value: null``)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea

from shard.protocol.events import PermissionRequest, UiRequest

# What a dialog returns: ("choice", choice_id) / ("decision", legacy decision) / ("value", ui value)
Answer = tuple[str, Any]

_CSS = """
RequestDialog { align: center middle; }
RequestDialog > Vertical {
    width: 80%; max-width: 100; height: auto; max-height: 90%;
    border: thick $warning; background: $surface; padding: 1 2;
}
RequestDialog .title { text-style: bold; margin-bottom: 1; }
RequestDialog .detail { margin-bottom: 1; }
RequestDialog Horizontal { height: auto; margin-top: 1; }
RequestDialog Button { margin-right: 1; }
RequestDialog TextArea { height: 8; }
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
        with Vertical():
            yield Label(Text(f"Permission: {request.tool_name}"), classes="title")
            if self.asker:
                yield Label(Text(f"Asked by {self.asker}"))
            yield Static(Text(request.prompt), classes="detail")
            for detail in request.details or []:
                line = Text(f"{detail.label}: " if detail.label else "", style="bold")
                line.append(
                    detail.value, style="cyan" if detail.format in ("command", "code", "path") else ""
                )
                yield Static(line, classes="detail")
            keys = {index: key for key, index in self._keys().items()}
            with Horizontal():
                for index, (_kind, _id, label) in enumerate(self._choices()):
                    yield Button(Text(f"[{keys.get(index, '')}] {label}"), id=f"choice-{index}")
            yield Label(Text("Esc: decide later (ctrl+r reopens)", style="dim"))

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
        with Vertical():
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
            yield Label(Text(keys, style="dim"))

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

"""UI requests (PROTOCOL §9.5): how tools and modes ask the user something.

``ask(board, kind, title=…, message=…, options=…)`` opens a ``ui_request`` through the request board
(status ``waiting_for_ui``) and returns the first valid answer: the chosen option for ``select``,
``True``/``False`` for ``confirm``, the text for ``input``/``editor``, ``None`` when dismissed. With
no client that can answer, the headless policy decides as for a permission request: ``None`` at once
(``ui_resolved {value: null, source: "headless"}``), or under ``queue`` the request waits until the
headless timeout (then ``error {TIMEOUT}`` and ``None``). ``notify`` only informs: it opens nothing
and returns ``None`` immediately.
"""

from __future__ import annotations

from typing import Any

from shard.agent.permissions.board import RequestBoard
from shard.protocol.agent_events import UiRequest
from shard.protocol.answers import CONFIRM_VALUES
from shard.protocol.ids import new_id

UI_KINDS = ("select", "confirm", "input", "editor", "notify")


async def ask(board: RequestBoard, kind: str, **fields: Any) -> Any:
    if kind not in UI_KINDS:
        raise ValueError(f"unknown ui kind {kind!r}")
    request = UiRequest(
        request_id=new_id("req"), kind=kind, **{k: v for k, v in fields.items() if v is not None}
    )
    if kind == "notify":
        board.notify(request)
        return None
    value = await board.ask(request)
    if kind == "confirm" and isinstance(value, str):
        return CONFIRM_VALUES[value]
    return value

"""UI requests (PROTOCOL §9.5): how tools and modes ask the user something.

``ask(rt, kind, title=…, message=…, options=…)`` opens a ``ui_request`` (status ``waiting_for_ui``)
and returns the first valid answer: the chosen option for ``select``, ``True``/``False`` for
``confirm``, the text for ``input``/``editor``, ``None`` when dismissed. With no client that can
answer — now, or when the last one leaves while it waits — it resolves with ``None`` at once
(``ui_resolved {value: null, source: "headless"}``). ``notify`` only informs: it opens nothing and
returns ``None`` immediately.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from shard.protocol.answers import CONFIRM_VALUES
from shard.protocol.events import UiRequest
from shard.protocol.ids import new_id

if TYPE_CHECKING:
    from shard.agent.runtime import Runtime

UI_KINDS = ("select", "confirm", "input", "editor", "notify")


async def ask(rt: Runtime, kind: str, **fields: Any) -> Any:
    if kind not in UI_KINDS:
        raise ValueError(f"unknown ui kind {kind!r}")
    request = UiRequest(
        request_id=new_id("req"), kind=kind, **{k: v for k, v in fields.items() if v is not None}
    )
    if kind == "notify":
        rt.emit(request)
        return None
    previous = rt.events.status
    rt.events.set_status("waiting_for_ui")
    future = rt.board.open(request)
    opened_headless = not rt.has_responder
    deadline: float | None = None
    loop = asyncio.get_running_loop()
    try:
        while not future.done():
            if not rt.has_responder:
                if opened_headless or rt.responders_final:
                    rt.board.resolve_ui(request.request_id, None, "headless")
                    break
                # someone was there and left: wait for a reconnect until the headless timeout
                deadline = deadline or loop.time() + rt.headless_timeout
                left = deadline - loop.time()
                if left <= 0:
                    rt.board.resolve_ui(request.request_id, None, "timeout")
                    break
                await asyncio.wait({future}, timeout=left)
                continue
            lost = asyncio.ensure_future(rt.responder_lost.wait())
            try:
                await asyncio.wait({future, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                lost.cancel()
    except asyncio.CancelledError:
        rt.board.resolve_ui(request.request_id, None, "abort")
        raise
    finally:
        with contextlib.suppress(Exception):
            rt.events.set_status(previous if previous != "waiting_for_ui" else "streaming")
    value = future.result()
    if kind == "confirm" and isinstance(value, str):
        return CONFIRM_VALUES[value]
    return value

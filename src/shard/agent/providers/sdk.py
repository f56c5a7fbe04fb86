"""Lazy loading of provider SDKs.

``anthropic`` and ``openai`` take 0.3 to 3 s to import. Nothing imports them at start-up: a provider
loads its SDK on a worker thread the first time it streams, and a runtime asks for its configured
provider's SDK in the background right after ``sync`` (:func:`preload`), so the first prompt a person
types rarely waits for it and ``hello``/``sync`` never do.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from types import ModuleType

_lock = threading.Lock()
_loaded: dict[str, ModuleType] = {}
_pending: dict[tuple[int, str], asyncio.Future[ModuleType]] = {}  # per event loop

SDK_MODULES = {"anthropic": "anthropic", "openai": "openai"}


def import_now(name: str) -> ModuleType:
    """Import the SDK ``name`` on this thread (the warm-runtime template, before it forks), so
    :func:`load` finds it loaded."""
    with _lock:
        module = _loaded.get(name)
        if module is None:
            module = importlib.import_module(name)
            _loaded[name] = module
        return module


async def load(name: str) -> ModuleType:
    """The SDK module, imported on a thread the first time (concurrent callers share the import)."""
    module = _loaded.get(name)
    if module is not None:
        return module
    key = (id(asyncio.get_running_loop()), name)
    pending = _pending.get(key)
    if pending is None:
        pending = asyncio.ensure_future(asyncio.to_thread(import_now, name))
        _pending[key] = pending
    try:
        return await asyncio.shield(pending)
    finally:
        if pending.done():
            _pending.pop(key, None)


def preload(kind: str) -> asyncio.Future[ModuleType] | None:
    """Start importing the SDK for a provider ``kind`` in the background; None for kinds with none."""
    name = SDK_MODULES.get(kind)
    if name is None or name in _loaded:
        return None
    future = asyncio.ensure_future(load(name))
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception never retrieved"
    return future

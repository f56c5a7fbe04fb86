"""Lazy loading of provider SDKs.

``anthropic`` and ``openai`` take 0.3 to 3 s to import. Nothing imports them at start-up: a provider
loads its SDK on a worker thread the first time it streams, and a runtime asks for its configured
provider's SDK in the background right after ``sync`` (:func:`preload`), so the first prompt a person
types rarely waits for it and ``hello``/``sync`` never do. An ``openai`` server on a plain-http base
URL needs none (``chat_http``): :func:`sdk_for` says which SDK a model's calls go through.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from types import ModuleType
from typing import TYPE_CHECKING

from shard.agent.providers import chat_http
from shard.agent.providers.backends import prepare_sdk_import

if TYPE_CHECKING:
    from shard.agent.catalog import ModelEntry
    from shard.agent.config.settings import ProviderConfig

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
            prepare_sdk_import()
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


def sdk_for(entry: ModelEntry) -> str | None:
    """The SDK module calls to ``entry`` go through (:func:`sdk_for_provider`)."""
    return sdk_for_provider(entry.provider)


def sdk_for_provider(provider: ProviderConfig) -> str | None:
    """The SDK module calls to ``provider`` go through: None for a kind without one, and for an
    ``openai`` server on a plain-http base URL, which ``chat_http`` speaks to itself."""
    if provider.kind == "openai" and chat_http.goes_direct(provider.base_url, os.environ):
        return None
    return SDK_MODULES.get(provider.kind)


def preload(entry: ModelEntry) -> asyncio.Future[ModuleType] | None:
    """Start importing the SDK calls to ``entry`` go through in the background; None when they
    need none."""
    name = sdk_for(entry)
    if name is None or name in _loaded:
        return None
    future = asyncio.ensure_future(load(name))
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception never retrieved"
    return future

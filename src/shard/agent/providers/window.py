"""The context window a model runs with, and where Shard learnt it.

In this order:

1. ``config`` — ``context_window`` of the model in config.toml (``builtin``: Shard's own catalog of
   the Anthropic and OpenAI models).
2. ``server`` — the server that serves it, asked once per provider and model in a process: its
   ``/v1/models`` (llama.cpp ``meta.n_ctx``, vLLM ``max_model_len``), then Ollama's ``/api/ps`` and
   ``/api/show`` and LM Studio's ``/api/v0/models/<id>`` (``window_shapes.py``). Only a provider
   with a ``base_url`` is asked (never the official APIs, which do not say); each request has
   2 s, nothing follows a redirect, and a server that cannot be reached is not asked again.
3. ``builtin`` — a model Shard's catalog knows by the same name (a config.toml entry of
   ``claude-sonnet-5-5`` without ``context_window``).
4. ``default`` — 8,192 tokens: small enough for any local server worth using with tools, and never
   a cloud model's 200K, which would let a local server's context overflow long before
   compaction. When a server names only the model's own length (Ollama, LM Studio with the model
   not loaded), the default is Ollama's smallest (4,096) or 8,192, whichever the model allows.

A ``scripted`` model without ``context_window`` has no window (Shard's test double: never compacted
automatically). The requests run on a daemon thread, so learning never holds up ``hello`` nor the
process's exit; nothing here touches the network at import (the warm-runtime template imports it).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import quote

import orjson

from shard import _secrets
from shard.agent.catalog import ANTHROPIC_MODELS, OPENAI_MODELS, ModelEntry, stated_window
from shard.agent.providers.retry import is_local
from shard.agent.providers.window_shapes import from_lmstudio, from_models, from_ollama_ps, from_ollama_show
from shard.protocol.agents import WindowSource
from shard.protocol.figures import window_said

DEFAULT_WINDOW = 8_192
OLLAMA_DEFAULT = 4_096
REQUEST_TIMEOUT = 2.0
_MAX_BODY = 1 << 20


class ContextWindow(NamedTuple):
    tokens: int
    source: WindowSource
    detail: str = ""  # how it was found, for a person ("llama.cpp n_ctx")

    @property
    def said(self) -> str:
        """``8,192 from the server``."""
        return window_said(self.tokens, self.source)


_learnt: dict[tuple[str, str | None, str], ContextWindow] = {}


def _key(entry: ModelEntry) -> tuple[str, str | None, str]:
    return entry.provider.kind, entry.provider.base_url, entry.model.id


def known(entry: ModelEntry) -> ContextWindow | None:
    """What is known now, without asking anyone: the stated window, or one learnt earlier."""
    stated = stated_window(entry)
    if stated is not None:
        return ContextWindow(stated[0], "builtin" if stated[1] == "builtin" else "config")
    return _learnt.get(_key(entry))


def needs_asking(entry: ModelEntry) -> bool:
    return entry.provider.kind in ("openai", "anthropic") and known(entry) is None


async def learn(entry: ModelEntry, per_request: float = REQUEST_TIMEOUT) -> ContextWindow | None:
    """The window of ``entry`` (None: a scripted model without one). Asks its server at most once."""
    found = known(entry)
    if found is not None or not needs_asking(entry):
        return found
    base = entry.provider.base_url
    if base:
        headers = _auth(entry)
        found = await _off_loop(lambda: _ask(entry.provider.kind, base, entry.model.id, headers, per_request))
    found = found or _builtin(entry) or ContextWindow(DEFAULT_WINDOW, "default", "no context_window")
    _learnt.setdefault(_key(entry), found)
    return _learnt[_key(entry)]


def forget() -> None:
    """Tests: learn again."""
    _learnt.clear()


def _builtin(entry: ModelEntry) -> ContextWindow | None:
    models = {"anthropic": ANTHROPIC_MODELS, "openai": OPENAI_MODELS}.get(entry.provider.kind, ())
    for model in models:
        if model.id == entry.model.id and model.context_window:
            return ContextWindow(model.context_window, "builtin", f"Shard's catalog entry for {model.id}")
    return None


def _auth(entry: ModelEntry) -> dict[str, str]:
    """The key the provider sends, sent the same way to the same server."""
    env = entry.provider.api_key_env
    key = _secrets.get(env) if env else None
    if not key:
        return {}
    if entry.provider.kind == "anthropic":
        return {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return {"Authorization": f"Bearer {key}"}


async def _off_loop(work: Callable[[], ContextWindow | None]) -> ContextWindow | None:
    """Run ``work`` on a daemon thread (never joined: an exit does not wait for a slow server)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[ContextWindow | None] = loop.create_future()

    def settle(value: ContextWindow | None) -> None:
        if not done.done():
            done.set_result(value)

    def run() -> None:
        try:
            value = work()
        except Exception:
            value = None
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, value)

    threading.Thread(target=run, name="shard-context-window", daemon=True).start()
    return await done


def _ask(kind: str, base: str, model: str, headers: dict[str, str], timeout: float) -> ContextWindow | None:
    """Ask the server at ``base`` (blocking). None: it did not say."""
    base = base.rstrip("/")
    root = base.removesuffix("/v1") if kind == "openai" else base
    models_url = f"{base}/models" if kind == "openai" else f"{base}/v1/models"
    http = _Http(headers, timeout, local=is_local(base))
    if (said := from_models(http.get(models_url), model)) is not None:
        return ContextWindow(said[0], "server", said[1])
    if http.unreachable:
        return None
    if (allocated := from_ollama_ps(http.get(f"{root}/api/ps"), model)) is not None:
        return ContextWindow(allocated, "server", "Ollama /api/ps context_length")
    num_ctx, trained = from_ollama_show(http.post(f"{root}/api/show", {"model": model}))
    if num_ctx is not None:
        return ContextWindow(num_ctx, "server", "Ollama num_ctx")
    if trained is not None:
        said = f"Ollama's default num_ctx (the model's own: {trained:,})"
        return ContextWindow(min(OLLAMA_DEFAULT, trained), "default", said)
    loaded, own = from_lmstudio(http.get(f"{root}/api/v0/models/{quote(model, safe='')}"))
    if loaded is not None:
        return ContextWindow(loaded, "server", "LM Studio loaded_context_length")
    if own is not None:
        return ContextWindow(min(DEFAULT_WINDOW, own), "default", f"not loaded (the model's own: {own:,})")
    return None


class _Http:
    """JSON requests with a timeout; any failure is None. After a failure to connect at all, the
    rest are not tried. Nothing follows a redirect: a key is never carried to another address."""

    def __init__(self, headers: dict[str, str], timeout: float, *, local: bool) -> None:
        import urllib.request  # on the worker thread: http.client and ssl are not the runtime's to load

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:
                return None

        handlers: list[Any] = [NoRedirect()]
        if local:
            handlers.append(urllib.request.ProxyHandler({}))  # a local server is reached directly
        self._opener = urllib.request.build_opener(*handlers)
        self._headers = {"Accept": "application/json", **headers}
        self._timeout = timeout
        self.unreachable = False

    def get(self, url: str) -> Any:
        return self._json(url, None)

    def post(self, url: str, body: dict[str, Any]) -> Any:
        return self._json(url, orjson.dumps(body))

    def _json(self, url: str, data: bytes | None) -> Any:
        import urllib.error
        import urllib.request

        if self.unreachable:
            return None
        headers = self._headers if data is None else {**self._headers, "Content-Type": "application/json"}
        request = urllib.request.Request(url, data, headers)
        try:
            with self._opener.open(request, timeout=self._timeout) as answer:
                raw = answer.read(_MAX_BODY)
        except urllib.error.HTTPError:
            return None  # the server is there; it does not serve this
        except (OSError, ValueError):
            self.unreachable = True  # refused, timed out, not HTTP
            return None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None

"""The context window a model runs with, and where Shard learnt it.

In this order:

1. ``config`` — ``context_window`` of the model in config.toml (``builtin``: Shard's own catalog of
   the Anthropic and OpenAI models).
2. ``server`` — the server that serves it, asked once per provider and model in a process: its
   ``/v1/models`` (llama.cpp ``meta.n_ctx``, vLLM ``max_model_len``), then, together, Ollama's
   ``/api/ps`` and ``/api/show`` and LM Studio's ``/api/v0/models/<id>`` (``window_shapes.py``;
   the first of them that says, in that order). Only a provider with a ``base_url`` is asked
   (never the official APIs, which do not say); each request has 2 s, nothing follows a redirect,
   and a server that cannot be reached is not asked again.
3. ``builtin`` — a model Shard's catalog knows by the same name (a config.toml entry of
   ``claude-sonnet-5-5`` without ``context_window``).
4. ``default`` — 8,192 tokens: small enough for any local server worth using with tools, and never
   a cloud model's 200K, which would let a local server's context overflow long before
   compaction. When a server names only the model's own length (Ollama, LM Studio with the model
   not loaded), the default is Ollama's smallest (4,096) or 8,192, whichever the model allows.

A ``scripted`` model without ``context_window`` has no window (Shard's test double: never compacted
automatically). The requests run on the event loop (a local ``http://`` server) or on daemon
threads (any other), so learning never holds up ``hello`` nor the process's exit; nothing here
touches the network at import (the warm-runtime template imports it).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

import orjson

from shard import _secrets
from shard.agent.catalog import ANTHROPIC_MODELS, OPENAI_MODELS, ModelEntry, stated_window
from shard.agent.providers import chat_http
from shard.agent.providers.errors import unsendable_key
from shard.agent.providers.retry import is_local
from shard.agent.providers.window_shapes import from_lmstudio, from_models, from_ollama_ps, from_ollama_show
from shard.protocol.agents import WindowSource
from shard.protocol.figures import window_said

DEFAULT_WINDOW = 8_192
OLLAMA_DEFAULT = 4_096
REQUEST_TIMEOUT = 2.0
_MAX_BODY = 1 << 20
# urllib's User-Agent: a local server is asked the same request on the loop as through urllib
_URLLIB_AGENT = f"Python-urllib/{sys.version_info.major}.{sys.version_info.minor}"


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
        try:
            found = await _ask(
                entry.provider.kind, base, entry.model.id, _http(base, _auth(entry), per_request)
            )
        except Exception:  # a server's odd answer, an odd base_url: the window is then not the server's
            found = None
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
    if not key or unsendable_key(entry.provider, key) is not None:
        return {}  # the provider itself says what is wrong with the key, at the first prompt
    if entry.provider.kind == "anthropic":
        return {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return {"Authorization": f"Bearer {key}"}


def _http(base: str, headers: dict[str, str], timeout: float) -> _Http:
    """A local server on plain ``http://`` is asked on the event loop (``chat_http``'s connection,
    which the first request uses too); any other through urllib on a daemon thread, for its proxies
    and TLS. The loop's way saves the runtime importing urllib.request, http.client and email (about
    13 ms of CPU, under the GIL) before its first request."""
    if is_local(base) and urlsplit(base.strip()).scheme.lower() == "http":
        return _LoopHttp(headers, timeout)
    return _ThreadHttp(headers, timeout, local=is_local(base))


async def _ask(kind: str, base: str, model: str, http: _Http) -> ContextWindow | None:
    """Ask the server at ``base``. None: it did not say."""
    base = base.rstrip("/")
    root = base.removesuffix("/v1") if kind == "openai" else base
    models_url = f"{base}/models" if kind == "openai" else f"{base}/v1/models"
    if (said := from_models(await http.get(models_url), model)) is not None:
        return ContextWindow(said[0], "server", said[1])
    if http.unreachable:
        return None
    # Not said there: Ollama's and LM Studio's own APIs, asked together (one round trip before a
    # first turn rather than three); the first that says, in this order, is the answer.
    ps, show, studio = await asyncio.gather(
        http.get(f"{root}/api/ps"),
        http.post(f"{root}/api/show", {"model": model}),
        http.get(f"{root}/api/v0/models/{quote(model, safe='')}"),
    )
    if (allocated := from_ollama_ps(ps, model)) is not None:
        return ContextWindow(allocated, "server", "Ollama /api/ps context_length")
    num_ctx, trained = from_ollama_show(show)
    if num_ctx is not None:
        return ContextWindow(num_ctx, "server", "Ollama num_ctx")
    if trained is not None:
        said = f"Ollama's default num_ctx (the model's own: {trained:,})"
        return ContextWindow(min(OLLAMA_DEFAULT, trained), "default", said)
    loaded, own = from_lmstudio(studio)
    if loaded is not None:
        return ContextWindow(loaded, "server", "LM Studio loaded_context_length")
    if own is not None:
        return ContextWindow(min(DEFAULT_WINDOW, own), "default", f"not loaded (the model's own: {own:,})")
    return None


class _Http:
    """JSON requests with a timeout; any failure is None. After a failure to connect at all, the
    rest are not tried. Nothing follows a redirect: a key is never carried to another address."""

    def __init__(self, headers: dict[str, str], timeout: float) -> None:
        self._headers = {"Accept": "application/json", **headers}
        self._timeout = timeout
        self.unreachable = False

    async def get(self, url: str) -> Any:
        return None if self.unreachable else _parsed(await self._body(url, None))

    async def post(self, url: str, body: dict[str, Any]) -> Any:
        return None if self.unreachable else _parsed(await self._body(url, orjson.dumps(body)))

    async def _body(self, url: str, data: bytes | None) -> bytes | None:
        """The body of a 2xx answer, at most ``_MAX_BODY`` bytes; None for any other answer, and
        ``unreachable`` set when there was none (refused, timed out, not HTTP)."""
        raise NotImplementedError

    def _request_headers(self, data: bytes | None) -> dict[str, str]:
        return self._headers if data is None else {**self._headers, "Content-Type": "application/json"}


def _parsed(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


class _LoopHttp(_Http):
    """Each request on a connection of its own, on the event loop, sent as urllib sends it (the same
    request line and headers, ``Connection: close``); no proxy, as urllib is told for a local server."""

    async def _body(self, url: str, data: bytes | None) -> bytes | None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        netloc = f"[{host}]" if ":" in host else host
        authority = netloc if parts.port is None else f"{netloc}:{parts.port}"
        head = [f"{'GET' if data is None else 'POST'} {target} HTTP/1.1", "Accept-Encoding: identity"]
        if data is not None:
            head.append(f"Content-Length: {len(data)}")
        head += [f"Host: {authority}", f"User-Agent: {_URLLIB_AGENT}"]
        head += [f"{name}: {value}" for name, value in self._request_headers(data).items()]
        head += ["Connection: close", "", ""]
        try:
            conn = await chat_http.connect(host, parts.port or 80, self._timeout)
        except chat_http.APIConnectionError:
            self.unreachable = True
            return None
        try:
            conn.writer.write("\r\n".join(head).encode("latin-1") + (data or b""))
            await conn.read(conn.writer.drain())
            response = await chat_http.read_response(conn)
            if not 200 <= response.status_code < 300:
                return None  # the server is there; it does not serve this (or sends us elsewhere)
            body = bytearray()
            async for piece in response.aiter_bytes():
                body += piece
                if len(body) >= _MAX_BODY:
                    break
            return bytes(body[:_MAX_BODY])
        except chat_http.APIConnectionError:
            self.unreachable = True
            return None
        finally:
            conn.close()


class _ThreadHttp(_Http):
    """Each request through urllib on a daemon thread of its own (never joined: an exit does not
    wait for a slow server), the environment's proxies used unless the server is local."""

    def __init__(self, headers: dict[str, str], timeout: float, *, local: bool) -> None:
        super().__init__(headers, timeout)
        self._local = local
        self._opener: Any = None

    async def _body(self, url: str, data: bytes | None) -> bytes | None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bytes | None] = loop.create_future()

        def settle(value: bytes | None) -> None:
            if not done.done():
                done.set_result(value)

        def run() -> None:
            try:
                value = self._blocking(url, data)
            except Exception:
                value = None
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(settle, value)

        threading.Thread(target=run, name="shard-context-window", daemon=True).start()
        return await done

    def _blocking(self, url: str, data: bytes | None) -> bytes | None:
        import urllib.error
        import urllib.request  # on the worker thread: http.client and ssl are not the runtime's to load

        if self._opener is None:

            class NoRedirect(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *args: Any, **kwargs: Any) -> None:
                    return None

            handlers: list[Any] = [NoRedirect()]
            if self._local:
                handlers.append(urllib.request.ProxyHandler({}))  # a local server is reached directly
            self._opener = urllib.request.build_opener(*handlers)
        request = urllib.request.Request(url, data, self._request_headers(data))
        try:
            with self._opener.open(request, timeout=self._timeout) as answer:
                return bytes(answer.read(_MAX_BODY))
        except urllib.error.HTTPError:
            return None  # the server is there; it does not serve this
        except (OSError, ValueError):
            self.unreachable = True  # refused, timed out, not HTTP
            return None

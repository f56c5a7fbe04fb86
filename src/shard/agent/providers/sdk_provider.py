"""What the SDK-backed providers share: the key (read once from the variable config names), the SDK
client (built lazily, on the SDK loaded off the start-up path, with SDK retries off — Shard retries
itself), and one boundary where every SDK or transport failure becomes a ProviderError.

For a plain ``http://`` base URL (a local server) the client is built without an SSL context: the
SDK's default loads the CA bundle (40 to 60 ms) for a connection that never uses it. ``verify=None``
leaves httpx's pool without a context, and httpcore builds its default one only should a request go
to an ``https://`` URL after all (a redirect), so nothing is verified less.

For ``https://`` every client of the process shares one context, made by the SDK's own HTTP library
with its defaults (``create_ssl_context()``: its CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR``): the
warm-runtime template makes it before it forks, so a forked runtime's first call does not load the CA
bundle again (~20 ms)."""

from __future__ import annotations

import functools
import ssl
import sys
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from shard import _secrets
from shard.agent.catalog import ModelEntry
from shard.agent.providers import sdk
from shard.agent.providers.base import ProviderError, ProviderEvent, ProviderRequest
from shard.agent.providers.errors import missing_key, translate, unsendable_key
from shard.protocol.errors import ErrorCode, ShardError

REQUEST_TIMEOUT = 600.0


class SdkProvider(ABC):
    sdk_module: ClassVar[str]  # "anthropic" | "openai"
    client_class: ClassVar[str]  # the SDK's async client
    no_key: ClassVar[str | None] = None  # the placeholder sent when config names no key variable

    def __init__(self, entry: ModelEntry) -> None:
        self.entry = entry
        self.name = entry.provider.name
        env = entry.provider.api_key_env
        key = _secrets.get(env) if env else self.no_key
        if not key:
            raise ShardError(ErrorCode.NOT_FOUND, missing_key(entry.provider))
        if (why := unsendable_key(entry.provider, key)) is not None:
            raise ShardError(ErrorCode.PROVIDER_ERROR, why)
        self._key = key
        self._client: Any = None

    async def client(self) -> Any:
        if self._client is None:
            module = await sdk.load(self.sdk_module)
            kwargs: dict[str, Any] = {"api_key": self._key, "max_retries": 0, "timeout": REQUEST_TIMEOUT}
            base_url = self.entry.provider.base_url
            if base_url:
                kwargs["base_url"] = base_url
            if plain_http(base_url):
                kwargs["http_client"] = module.DefaultAsyncHttpxClient(verify=None)
            elif (context := shared_tls_context(module)) is not None:
                kwargs["http_client"] = module.DefaultAsyncHttpxClient(verify=context)
            self._client = getattr(module, self.client_class)(**kwargs)
        return self._client

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        try:
            async for event in self.events(request):
                yield event
        except ProviderError:
            raise
        except Exception as exc:
            raise translate(exc, self.entry.provider, self._key) from None

    @abstractmethod
    def events(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """The SDK call, folded into normalized events (failures translated by ``stream``)."""


async def warm_up(provider_class: type[SdkProvider], kind: str) -> None:
    """Make one call of ``provider_class`` that fails at once (a refused loopback port, no retries):
    everything its first real call imports — the SDK's resources, its HTTP transport, our fold — is
    then loaded. The warm-runtime template runs this before it forks any runtime."""
    from shard.agent.config.settings import ModelConfig, ProviderConfig
    from shard.protocol.content import Message, TextBlock

    entry = ModelEntry(ProviderConfig("warm", kind, base_url="http://127.0.0.1:1"), ModelConfig("m"))
    provider = provider_class.__new__(provider_class)
    provider.entry, provider.name, provider._key, provider._client = entry, "warm", "warm-up", None
    request = ProviderRequest(
        model="m", system="", messages=[Message(id="msg-warm", role="user", content=[TextBlock(text="hi")])]
    )
    try:
        async for _ in provider.stream(request):
            pass
    except ProviderError:
        pass  # the refusal: what it was for
    if provider._client is not None:
        await provider._client.close()
    # An https client too (built, never used): the shared TLS context, and whatever else the SDK
    # makes once per process for TLS, are then made here, before any fork.
    secure = provider_class.__new__(provider_class)
    secure.entry = ModelEntry(ProviderConfig("warm", kind, base_url="https://127.0.0.1:1"), ModelConfig("m"))
    secure.name, secure._key, secure._client = "warm", "warm-up", None
    await (await secure.client()).close()


def shared_tls_context(module: Any) -> ssl.SSLContext | None:
    """The TLS context every https client of SDK ``module`` shares (None: its HTTP library offers no
    ``create_ssl_context``, and the SDK makes its own as before)."""
    library = module.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]
    return _tls_context(library)


@functools.cache
def _tls_context(library: str) -> ssl.SSLContext | None:
    make = getattr(sys.modules.get(library), "create_ssl_context", None)
    return make() if callable(make) else None


def plain_http(base_url: str | None) -> bool:
    """True for a base URL no TLS connection can serve (pure)."""
    return base_url is not None and base_url.partition("://")[0].strip().lower() == "http"

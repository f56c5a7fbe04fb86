"""Translate an SDK or transport failure into a ProviderError — once, at the provider boundary.

Both official SDKs raise the same family (``APIStatusError`` with ``status_code`` and ``response``,
``APIConnectionError``, ``APITimeoutError``); the transport underneath raises its own errors when a
stream is cut. Nothing here ever puts a key in a message: messages are built from the status, the
server's error text and the *name* of the variable that holds the key.
"""

from __future__ import annotations

import errno
import re
import socket
import time
from typing import Any

from shard.agent.config.settings import ProviderConfig
from shard.agent.providers.base import ProviderError
from shard.agent.providers.overflow import is_context_overflow

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def key_hint(provider: ProviderConfig) -> str:
    if provider.api_key_env is None:
        return (
            f"provider '{provider.name}' in config.toml has no api_key_env; "
            "set it to the name of the variable holding the key"
        )
    if provider.builtin:
        return f"check the key in the {provider.api_key_env} environment variable"
    return (
        f"check the key in the {provider.api_key_env} environment variable "
        f"(api_key_env of provider '{provider.name}' in config.toml)"
    )


def missing_key(provider: ProviderConfig) -> str:
    return (
        f"provider '{provider.name}' needs an API key: set the {provider.api_key_env} environment variable"
        if provider.api_key_env
        else f"provider '{provider.name}' needs an API key: set api_key_env in its config.toml entry"
    )


def unsendable_key(provider: ProviderConfig, key: str) -> str | None:
    """Why ``key`` cannot go in an HTTP header — a line break or a space (a key pasted with its
    newline), a character outside ASCII — said without any of the key; None when it can."""
    for place, char in enumerate(key):
        if char.isascii() and char.isprintable() and not char.isspace():
            continue
        what = "a line break" if char in "\r\n" else "a space" if char.isspace() else "a character"
        if not char.isascii():
            what = "a non-ASCII character"
        where = "at its end" if place == len(key) - 1 else "at its start" if place == 0 else "inside it"
        source = f"the {provider.api_key_env} environment variable" if provider.api_key_env else "its key"
        return (
            f"provider '{provider.name}': {source} holds {what} {where}, which an HTTP header cannot "
            "carry: set it again without it"
        )
    return None


def translate(exc: BaseException, provider: ProviderConfig, key: str | None = None) -> ProviderError:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        detail = scrub(_server_message(exc), key)
        if status < 400:  # an error event inside a 200 stream: take its type's HTTP meaning
            status = _STREAM_ERRORS.get(_error_type(exc), 500)
        if status in (401, 403):
            return ProviderError(
                f"{provider.name}: authentication failed (HTTP {status}): {key_hint(provider)}"
                + (f" — the server said: {detail}" if detail else ""),
                status=status,
            )
        overflow = is_context_overflow(status, _body(exc, detail))
        label = "HTTP 529 overloaded" if status == 529 else f"HTTP {status}"
        return ProviderError(
            f"{provider.name}: {label}" + (f": {detail}" if detail else ""),
            retryable=status in RETRYABLE_STATUS and not overflow,  # the same request would not fit
            status=status,
            retry_after=_retry_after(getattr(exc, "response", None)),
            context_overflow=overflow,
        )
    body = getattr(exc, "body", None)
    if body is not None and type(exc).__name__ == "APIError":  # an error the server sent inside a 200 stream
        detail = scrub(_server_message(exc), key)
        code = body.get("code") if isinstance(body, dict) else None  # its HTTP twin, when it names one
        overflow = is_context_overflow(None, _body(exc, detail))
        return ProviderError(
            f"{provider.name}: the server sent an error: {detail}",
            retryable=code in RETRYABLE_STATUS and not overflow,
            status=code if isinstance(code, int) else None,
            context_overflow=overflow,
        )
    name = type(exc).__name__
    if "Timeout" in name:
        return ProviderError(f"{provider.name}: the request timed out", retryable=True)
    module = type(exc).__module__
    if (
        "Connection" in name
        or module.startswith(("httpx", "httpcore", "h11", "anyio", "ssl"))
        or isinstance(exc, ConnectionError | EOFError)
    ):
        if _refused(exc):
            url = provider.base_url
            said = f"nothing is listening at {url}" if url else "the connection was refused"
            return ProviderError(
                f"{provider.name}: {said}: is the server running?", retryable=True, refused=True, endpoint=url
            )
        return ProviderError(f"{provider.name}: {_connection_trouble(exc, provider, key)}", retryable=True)
    return ProviderError(f"{provider.name}: {name}: {scrub(str(exc), key)}")


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return chain


def _refused(exc: BaseException) -> bool:
    """A refused connection: nothing listens at that address (the server is not running)."""
    chain = _chain(exc)
    if any(
        isinstance(link, ConnectionRefusedError) or getattr(link, "errno", None) == errno.ECONNREFUSED
        for link in chain
    ):
        return True
    text = " ".join(str(link) for link in chain).lower()
    return "connection refused" in text or "connect call failed" in text


def _connection_trouble(exc: BaseException, provider: ProviderConfig, key: str | None) -> str:
    """What else went wrong with the connection, named as a person fixing it needs it: the host
    unknown, reset, or lost mid-answer."""
    where = f" ({provider.base_url})" if provider.base_url else ""
    chain = _chain(exc)
    for link in chain:
        if isinstance(link, socket.gaierror):
            return f"cannot resolve the host{where}"
        if isinstance(link, ConnectionResetError):
            return "connection reset by the server"
    text = " ".join(str(link) for link in chain).lower()
    if "name or service not known" in text or "nodename nor servname" in text:
        return f"cannot resolve the host{where}"
    why = str(chain[-1]) or type(chain[-1]).__name__
    return f"connection lost ({scrub(why, key)})"


# Anthropic streams report errors as SSE `event: error` after a 200; these are their HTTP twins.
_STREAM_ERRORS = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
}


def _error_type(exc: BaseException) -> str | None:
    body: Any = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("type"), str):
            return err["type"]
        if isinstance(body.get("type"), str) and body.get("type") != "error":
            return body["type"]
    return None


def _body(exc: BaseException, detail: str) -> object:
    """The error body as the SDK parsed it (the OpenAI SDK keeps only its ``error`` member), else
    the server's message."""
    body = getattr(exc, "body", None)
    return body if body is not None else detail


def _server_message(exc: BaseException) -> str:
    body: Any = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            message = err.get("message")
        elif isinstance(err, str):
            message = err
        message = message or body.get("message")
    elif isinstance(body, str):  # {"error": "…"} (LM Studio, Ollama): the OpenAI SDK keeps the string
        message = body
    if not isinstance(message, str) or not message:
        message = str(getattr(exc, "message", "") or "")
    return message[:500]


def _retry_after(response: Any) -> float | None:
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return float(raw_ms) / 1000
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        import email.utils  # only for an HTTP-date: ~4 ms every start would pay otherwise

        parsed = email.utils.parsedate_to_datetime(raw) if raw else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def scrub(text: str, key: str | None) -> str:
    """Remove the key (and any long prefix of it a server may quote) from text we pass on."""
    if key and len(key) >= 8:
        text = text.replace(key, "[redacted]")
        text = re.sub(re.escape(key[:8]) + r"\S*", "[redacted]", text)
    return text[:500]

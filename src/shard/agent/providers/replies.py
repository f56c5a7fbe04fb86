"""What a server may send a streaming request instead of a stream, taken the same way by both kinds.

* **A whole JSON reply** (``200 application/json``): llama.cpp's server answers a streaming request
  with the whole ``chat.completion`` on its OpenAI API and the whole Messages ``message`` on its
  Anthropic one, and LiteLLM proxies may do the same. Each adapter folds it as the stream events that
  carry the same reply (``openai.completion_chunk``, ``anthropic.message_events``), so it is one reply,
  never a stream of zero events to retry.
* **An error in a 200 JSON body** (``{"error": …}``): an error with the server's words, a context
  overflow when those words say so (``overflow.py``).
* **An empty reply**: no text, no thinking and no tool call, whatever else came (a role, a stop
  reason, usage; an empty body; no events at all). A retryable ProviderError: retried like a dropped
  connection, then one error — never an empty assistant message passed off as an answer. Unless the
  output limit stopped it: a real llama-server cut at ``max_tokens`` while the model began a tool
  call sends nothing of it (it holds back a half call), and asking again meets the same limit — one
  error naming the limit, not retried (:func:`cut_before_anything`).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import orjson

from shard.agent.providers.base import ProviderError
from shard.agent.providers.errors import scrub
from shard.agent.providers.overflow import is_context_overflow

EMPTY = "the model returned an empty reply"


def empty_reply(provider: str, what: str) -> ProviderError:
    """The retryable failure of a reply with nothing in it; ``what`` says what came instead."""
    return ProviderError(f"{provider}: {EMPTY}: {what}", retryable=True)


def cut_before_anything(provider: str, model: str, limit: int | None) -> ProviderError:
    """A reply the output limit ended before any text, thinking or tool call came: not retried."""
    asked = f"max_tokens {limit}" if limit else "the server's own max_tokens"
    return ProviderError(
        f"{provider}: the reply was cut at the model's output limit ({asked}) before any of it came; "
        f"max_output_tokens of {model} in config.toml sets the limit"
    )


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def whole_reply(provider: str, body: bytes, key: str | None, *, kind: str, content: str) -> dict[str, Any]:
    """A ``200 application/json`` answer to a streaming request as the reply object it holds (a
    ``kind`` whose reply lives under ``content``), or the ProviderError it amounts to."""
    if not body.strip():
        raise empty_reply(provider, "a 200 application/json with an empty body")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        text = scrub(body.decode(errors="replace"), key)[:200]
        raise ProviderError(f"{provider}: the server's JSON reply is not {kind}: {text}")
    error = data.get("error")
    if error and not data.get(content):
        said = scrub(str(error.get("message") if isinstance(error, dict) else error), key)
        raise ProviderError(
            f"{provider}: the server answered with an error: {said}",
            context_overflow=is_context_overflow(None, data),
        )
    return data


def attrs(value: Any) -> Any:
    """JSON as objects with attributes, the shape the folds read from the SDKs' event objects."""
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): attrs(v) for k, v in value.items()})
    if isinstance(value, list):
        return [attrs(v) for v in value]
    return value

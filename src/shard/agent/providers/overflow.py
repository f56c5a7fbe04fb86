"""Whether a server's error says the request did not fit the model's context window (pure).

Every server words it its own way; the turn loop compacts once and retries once when this says yes
(``turn.py``), so a local model's small window is outgrown rather than hit. Both adapters ask this one
function, over the HTTP status and the error body as the server sent it (the parsed JSON, or its text):

=============  ======  =============================================================================
server         status  what it says (source)
=============  ======  =============================================================================
Anthropic      400     ``prompt is too long: 210412 tokens > 200000 maximum``
OpenAI         400     code ``context_length_exceeded``; ``This model's maximum context length is …``
llama.cpp      400     type ``exceed_context_size_error``, ``request (3033 tokens) exceeds the available
                       context size (2048 tokens), try increasing it`` — on both its APIs, stream or not
                       (recorded: tests' ``fixtures/llama-cpp``); builds before the 400 answered 500
                       with the same type and ``the request exceeds the available context size``
                       (ggml-org/llama.cpp#15780)
vLLM           400     ``This model's maximum context length is 6048 tokens. However, you requested 6616
                       tokens (568 in the messages, 6048 in the completion). …`` (vllm-project/vllm#20409)
Ollama         400     ``the prompt is longer than the context length currently available to the model;
                       …`` (``llm/llama_server.go``, context shift off), ``input length (N tokens)
                       exceeds the model's maximum context length (M tokens)`` (its MLX runner), or
                       llama-server's own JSON inside its ``error`` string; by default it shortens
                       the prompt silently and answers 200 (ollama/ollama#4967, #17889)
LM Studio      400     ``{"error": "The number of tokens to keep from the initial prompt is greater than
                       the context length (n_keep: 13055>= n_ctx: 4096). …"}``; older: ``Trying to keep
                       the first N tokens when context the overflows. …`` (lmstudio-bug-tracker#237,
                       #546); 0.4: ``Cannot truncate prompt with n_keep (N) >= n_ctx (M)``
LiteLLM        400     ``litellm.ContextWindowExceededError: litellm.BadRequestError: …`` whatever the
                       upstream said (``litellm/exceptions.py``; OpenHands/OpenHands#5350)
=============  ======  =============================================================================

Only an error's own words count — ``message``, ``error``, ``type``, ``code``, ``detail`` at any depth,
and a JSON document inside one of them (Ollama passes llama-server's along as a string) — never
anything else a body may echo, such as the request. The words count on a 400 or 413, and on an error
sent inside a 200 stream (``status`` None); llama.cpp's ``exceed_context_size_error`` counts on any
status, since older builds sent it with a 500.
"""

from __future__ import annotations

from typing import Any

import orjson

OVERFLOW_STATUS = frozenset({400, 413})
LLAMA_CPP_TYPE = "exceed_context_size_error"
_MARKERS = (
    "prompt is too long",  # Anthropic
    "context_length_exceeded",  # OpenAI's code
    "maximum context length",  # OpenAI, vLLM, Ollama's MLX runner
    "context window",
    "too many tokens",
    LLAMA_CPP_TYPE,  # llama.cpp's type, also inside another server's message
    "exceeds the available context size",  # llama.cpp
    "longer than the context length",  # Ollama
    "greater than the context length",  # LM Studio
    "trying to keep the first",  # LM Studio, older
    "cannot truncate prompt with n_keep",  # LM Studio 0.4
    "contextwindowexceedederror",  # LiteLLM
)
_FIELDS = frozenset({"message", "error", "type", "code", "detail"})
_DEPTH = 6


def is_context_overflow(status: int | None, body: object) -> bool:
    """Whether an error with HTTP ``status`` (None: sent inside a 200 stream) and ``body`` (parsed
    JSON or text) says the request is longer than the model's context."""
    said = " ".join(_words(body, _DEPTH)).lower()
    if LLAMA_CPP_TYPE in said:
        return True
    if status is not None and status not in OVERFLOW_STATUS:
        return False
    return any(marker in said for marker in _MARKERS)


def _words(value: Any, depth: int) -> list[str]:
    """The error's own words: strings under the error fields, at any depth, and a JSON document
    given as one of those strings read the same way."""
    if depth <= 0:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                return [value, *_words(orjson.loads(text), depth - 1)]
            except orjson.JSONDecodeError:
                pass
        return [value]
    if isinstance(value, dict):
        return [w for key, item in value.items() if key in _FIELDS for w in _words(item, depth - 1)]
    if isinstance(value, list):
        return [w for item in value for w in _words(item, depth - 1)]
    return [str(value)] if isinstance(value, int) else []

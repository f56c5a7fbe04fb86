"""What each local server says about the context it runs a model with (pure: JSON in, tokens out).

- llama.cpp ``llama-server``: ``GET /v1/models`` → ``data[].meta.n_ctx``, the context it runs with
  (``-c``); ``n_ctx_train`` is the model's own.
- vLLM (and SGLang): ``GET /v1/models`` → ``data[].max_model_len`` (``--max-model-len``).
- LM Studio: ``GET /api/v0/models/<id>`` → ``loaded_context_length`` for a loaded model;
  ``max_context_length`` is the model's own.
- Ollama: ``GET /api/ps`` → ``models[].context_length``, the context allocated to a loaded model;
  ``POST /api/show`` → ``num_ctx N`` in ``parameters`` (the Modelfile's), and
  ``model_info["<arch>.context_length"]``, the model's own.
- OpenRouter, Groq: ``context_length``, ``context_window`` in ``/v1/models``.

A model's own (trained) length is not the window: llama.cpp, Ollama and LM Studio run a model with
a smaller context unless told otherwise. Ollama uses ``num_ctx`` from the Modelfile, else
``OLLAMA_CONTEXT_LENGTH``, else its default — 2,048 before v0.6.7, 4,096 since, and since v0.15.5
4,096 below 24 GiB of VRAM (32K below 48 GiB, 256K above) — and it silently drops the start of a
prompt that is longer (its OpenAI-compatible endpoint cannot set ``num_ctx``). When a server names
only the model's own length, the window is a default no larger than it (``window.py``).
"""

from __future__ import annotations

import re
from typing import Any

# Fields of a /v1/models entry that state the context a server runs the model with.
_MODELS_FIELDS = (
    ("max_model_len", "vLLM max_model_len"),
    ("loaded_context_length", "LM Studio loaded_context_length"),
    ("context_length", "context_length"),
    ("context_window", "context_window"),
)
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value >= 1 else None


def _entries(body: Any, key: str) -> list[dict[str, Any]]:
    items = body.get(key) if isinstance(body, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _named(entries: list[dict[str, Any]], model: str, *keys: str) -> dict[str, Any] | None:
    """The entry for ``model`` (by any of ``keys``, an Ollama ``:latest`` tag allowed); the only
    entry when there is one (llama-server answers for its one model whatever it is called)."""
    names = {model, f"{model}:latest"}
    for entry in entries:
        aliases = entry.get("aliases")
        if any(entry.get(k) in names for k in keys if isinstance(entry.get(k), str)) or (
            isinstance(aliases, list) and model in aliases
        ):
            return entry
    return entries[0] if len(entries) == 1 else None


def from_models(body: Any, model: str) -> tuple[int, str] | None:
    """``GET /v1/models`` (OpenAI-compatible): the window and the field that said it."""
    entry = _named(_entries(body, "data"), model, "id")
    if entry is None:
        return None
    meta = entry.get("meta")
    if isinstance(meta, dict) and (n_ctx := _positive(meta.get("n_ctx"))):
        return n_ctx, "llama.cpp n_ctx"
    for field, said in _MODELS_FIELDS:
        if value := _positive(entry.get(field)):
            return value, said
    return None


def from_ollama_ps(body: Any, model: str) -> int | None:
    """``GET /api/ps``: the context allocated to ``model``, when it is loaded."""
    names = {model, f"{model}:latest"}
    for entry in _entries(body, "models"):
        if any(isinstance(entry.get(k), str) and entry[k] in names for k in ("name", "model")):
            return _positive(entry.get("context_length"))
    return None


def from_ollama_show(body: Any) -> tuple[int | None, int | None]:
    """``POST /api/show``: (the Modelfile's ``num_ctx``, the model's own context length)."""
    if not isinstance(body, dict):
        return None, None
    num_ctx = None
    parameters = body.get("parameters")
    if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)):
        num_ctx = _positive(int(match.group(1)))
    trained = None
    info = body.get("model_info")
    if isinstance(info, dict):
        trained = next(
            (_positive(v) for k, v in info.items() if isinstance(k, str) and k.endswith(".context_length")),
            None,
        )
    return num_ctx, trained


def from_lmstudio(body: Any) -> tuple[int | None, int | None]:
    """``GET /api/v0/models/<id>``: (the loaded context, the model's own)."""
    if not isinstance(body, dict):
        return None, None
    loaded = _positive(body.get("loaded_context_length")) if body.get("state", "loaded") == "loaded" else None
    return loaded, _positive(body.get("max_context_length"))

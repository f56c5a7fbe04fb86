"""Helpers shared by the provider tests: catalog entries from a real config.toml, draining a
provider's stream, and SHARD_HOMEs whose config points a provider at the local test server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from shard.agent.catalog import ModelCatalog, ModelEntry
from shard.agent.config.settings import load_config
from shard.agent.providers.base import ProviderError, ProviderEvent, ProviderRequest, ToolCallArgs
from shard.protocol.content import Message, TextBlock

# A distinctive key value: tests grep for it everywhere it must never appear.
KEY = "sk-shard-test-4f1c9a7e2b6d8035c0de"
KEY_ENV = "SHARD_TEST_PROVIDER_KEY"
SYSTEM = "You are a careful coding agent."

# A fast retry policy so failure tests never wait long: [retry] in config.toml.
FAST_RETRY = "[retry]\nmax_attempts = 3\nbase_delay = 0.01\nmax_delay = 0.05\n"


def write_home(home: Path, body: str, *, default_model: str | None = None, retry: str = FAST_RETRY) -> Path:
    """Write ``home/config.toml`` (``body`` holds the ``[[providers]]`` tables)."""
    home.mkdir(parents=True, exist_ok=True)
    head = f'default_model = "{default_model}"\n\n' if default_model else ""
    (home / "config.toml").write_text(head + retry + "\n" + body)
    return home


def server_home(
    home: Path,
    server: Any,
    kind: str,
    *,
    name: str = "local",
    model: str = "m",
    models: str | None = None,
    retry: str = FAST_RETRY,
) -> Path:
    """``home`` whose one provider, ``name`` of ``kind``, is the local test server ``server``
    (``models``: the TOML array, by default just ``model``), with ``name/model`` the default model."""
    url = server.openai_url if kind == "openai" else server.anthropic_url
    body = provider_toml(name, kind, url, models or f'["{model}"]')
    return write_home(home, body, default_model=f"{name}/{model}", retry=retry)


def of_type(read: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The messages of type ``kind`` among ``read``, in order."""
    return [m for m in read if m["type"] == kind]


def provider_toml(name: str, kind: str, base_url: str, models: str, *, key_env: str | None = KEY_ENV) -> str:
    """One ``[[providers]]`` table; ``models`` is the TOML array text."""
    lines = ["[[providers]]", f'name = "{name}"', f'kind = "{kind}"', f'base_url = "{base_url}"']
    if key_env is not None:
        lines.append(f'api_key_env = "{key_env}"')
    lines.append(f"models = {models}")
    return "\n".join(lines) + "\n"


def entry_from_config(home: Path, body: str, selection: str) -> ModelEntry:
    """The catalog entry for ``selection`` from a freshly written and parsed config.toml."""
    write_home(home, body)
    entry = ModelCatalog(load_config(home)).resolve(selection)
    assert entry is not None, selection
    return entry


def user(text: str, msg_id: str = "msg-u") -> Message:
    return Message(id=msg_id, role="user", content=[TextBlock(text=text)])


def request(model: str, messages: list[Message] | None = None, **kw: Any) -> ProviderRequest:
    return ProviderRequest(model=model, system=SYSTEM, messages=messages or [user("hi")], **kw)


async def collect(provider: Any, req: ProviderRequest) -> tuple[list[ProviderEvent], ProviderError | None]:
    """Every event the provider yields, and the ProviderError that ended the stream (or None).

    Closes the SDK client afterwards so no socket outlives the test (warnings are errors).
    """
    events: list[ProviderEvent] = []
    error: ProviderError | None = None
    try:
        async for event in provider.stream(req):
            events.append(event)
    except ProviderError as exc:
        error = exc
    finally:
        await close_client(provider)
    return events, error


async def close_client(provider: Any) -> None:
    client = getattr(provider, "_client", None)  # the SDK client is built lazily on first stream
    if client is not None:
        await client.close()
        provider._client = None
    direct = getattr(provider, "_direct", None)  # chat_http's kept-alive connection
    if direct is not None:
        await direct.aclose()


def without_empty_args(events: list[ProviderEvent]) -> list[ProviderEvent]:
    """Anthropic opens every tool_use with an empty ``input_json_delta``; it carries nothing."""
    return [e for e in events if not (isinstance(e, ToolCallArgs) and e.fragment == "")]


def session_entries(home: Path) -> list[dict[str, Any]]:
    path = next((home / "sessions").glob("*/session.jsonl"))
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def files_containing(root: Path, needle: str) -> list[Path]:
    """Every file under ``root`` whose bytes contain ``needle``."""
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]

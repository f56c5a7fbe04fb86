"""Build a throwaway SHARD_HOME for tests and demos."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson


def write_scripted_home(
    home: Path,
    steps: list[dict[str, Any]],
    *,
    loop: bool = False,
    models: list[dict[str, Any]] | None = None,
    extra_toml: str = "",
    record: bool = True,
    extensions: list[str] | None = None,
    script_extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``home/config.toml`` with a ``test`` scripted provider playing ``steps``.

    The default model is ``test/m``. With ``record`` every provider request is appended to
    ``home/requests.jsonl``. ``script_extra`` adds top-level script keys (``summary``,
    ``summary_error``). Returns ``home``.
    """
    home.mkdir(parents=True, exist_ok=True, mode=0o700)  # as shard makes it: a looser one is reported
    (home / "script.json").write_bytes(orjson.dumps({"loop": loop, "steps": steps, **(script_extra or {})}))
    model_rows = models or [{"id": "m", "context_window": 100_000}]
    lines = [
        'default_model = "test/m"',
        "",
        "[[providers]]",
        'name = "test"',
        'kind = "scripted"',
        'script = "script.json"',
    ]
    if record:
        lines.append('record = "requests.jsonl"')
    lines.append("models = [" + ", ".join(_inline_table(m) for m in model_rows) + "]")
    if extensions:
        lines += ["", "[tools]", "extensions = [" + ", ".join(f'"{e}"' for e in extensions) + "]"]
    config = home / "config.toml"
    config.write_text("\n".join(lines) + "\n" + extra_toml)
    config.chmod(0o600)  # shard refuses a config others may write, whatever the umask
    return home


def scripted_provider(home: Path, name: str, steps: list[dict[str, Any]], *, loop: bool = False) -> str:
    """Write ``home/<name>.json`` playing ``steps`` and return the config for a scripted provider
    ``name`` (one model, ``<name>/m``) to pass as ``write_scripted_home(extra_toml=…)``: agents of
    one home on different scripts (a parent and its background child, say)."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / f"{name}.json").write_bytes(orjson.dumps({"loop": loop, "steps": steps}))
    return (
        f'\n[[providers]]\nname = "{name}"\nkind = "scripted"\nscript = "{name}.json"\n'
        f'models = [{{ id = "m", context_window = 100000 }}]\n'
    )


def text_step(text: str, **extra: Any) -> dict[str, Any]:
    """A script step that answers with one text block."""
    return {"blocks": [{"type": "text", "text": text}], **extra}


def tool_step(name: str, args: dict[str, Any], text: str | None = None, **extra: Any) -> dict[str, Any]:
    """A script step that (optionally says something, then) calls one tool."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_call", "name": name, "args": args})
    return {"blocks": blocks, **extra}


def types(messages: list[dict[str, Any]]) -> list[str]:
    """The ``type`` of each message, in order."""
    return [m["type"] for m in messages]


def recorded_requests(home: Path) -> list[dict[str, Any]]:
    """The provider requests the scripted provider recorded, oldest first."""
    path = home / "requests.jsonl"
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line]


def _inline_table(row: dict[str, Any]) -> str:
    parts = []
    for k, v in row.items():
        parts.append(f"{k} = {_toml_value(v)}")
    return "{ " + ", ".join(parts) + " }"


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return orjson.dumps(v).decode()
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return _inline_table(v)
    raise TypeError(f"cannot write {type(v).__name__} as TOML")

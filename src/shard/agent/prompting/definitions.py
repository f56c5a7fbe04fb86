"""Agent definitions: named child agents a parent can delegate to (issue 14).

A definition is one Markdown file, ``<cwd>/.shard/agents/<name>.md`` (the project's) or
``$SHARD_HOME/agents/<name>.md`` (the user's); the project's wins on the same name. It opens with
front matter between two ``---`` lines, one ``key: value`` a line::

    ---
    description: Reviews a diff for bugs and missing tests
    model: anthropic/claude-sonnet-4-5
    mode: plan
    tools: [read, grep, find]
    headless_policy: deny
    names: [ada, grace, linus]
    ---
    You review code. Report problems as a list, most serious first.

``description`` is required; ``model``, ``mode``, ``tools`` (``[a, b]`` or ``a, b``),
``headless_policy`` (deny | allow_if_rule_matches | queue) and ``names`` (the friendly aliases its
children get, in order, before ``<name>-2``…) are optional. The body is the child's
system prompt, at most :data:`MAX_PROMPT_BYTES` bytes. Names match ``[a-z0-9][a-z0-9_-]*``,
case-insensitively. A file that breaks a rule (an unknown key, no description, a body too long, a bad
name, unreadable) is skipped, and the loader returns one line saying why; it never raises.

Pure stdlib: it runs at start-up, before ``hello``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from shard.protocol.headless import HEADLESS_POLICIES

MAX_PROMPT_BYTES = 32 * 1024  # a definition's body, and the daemon's --system-prompt-file
_MAX_FILE_BYTES = MAX_PROMPT_BYTES + 16 * 1024  # room for the front matter
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_KEYS = ("description", "model", "mode", "tools", "headless_policy", "names", "host")


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    description: str
    prompt: str
    model: str | None = None
    mode: str | None = None
    tools: tuple[str, ...] | None = None
    headless_policy: str | None = None
    source: Path | None = None
    names: tuple[str, ...] | None = None  # the alias pool of its children
    host: str | None = None  # the [[hosts]] entry its children run on (None: their parent's)


class DefinitionError(ValueError):
    """Why one file is not a definition (the loader turns it into a problem line)."""


def load_definitions(cwd: Path, home: Path) -> tuple[dict[str, Definition], list[str]]:
    """The definitions by lower-cased name (the project's over the user's), and one line for each
    file skipped."""
    found: dict[str, Definition] = {}
    problems: list[str] = []
    for folder in (home / "agents", cwd / ".shard" / "agents"):  # later folders win
        here: dict[str, Definition] = {}
        for path in _files(folder, problems):
            try:
                definition = read_definition(path)
            except DefinitionError as exc:
                problems.append(f"agent definition {path}: {exc}; skipped")
                continue
            if definition.name in here:
                problems.append(
                    f"agent definition {path}: {here[definition.name].source} has the same name; skipped"
                )
                continue
            here[definition.name] = definition
        found.update(here)
    return found, problems


def _files(folder: Path, problems: list[str]) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(f"agent definitions in {folder} cannot be listed: {exc.strerror or exc}")
        return []


def read_definition(path: Path) -> Definition:
    """One definition file; raises :class:`DefinitionError` naming the first thing wrong."""
    name = path.stem.lower()
    if not _NAME.fullmatch(name):
        raise DefinitionError(f"the name {path.stem!r} is not letters, digits, '-' and '_' (a-z0-9 first)")
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise DefinitionError(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > _MAX_FILE_BYTES:
        raise DefinitionError(f"the file is larger than {_MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DefinitionError("it is not UTF-8 text") from None
    fields, body = parse_front_matter(text)
    return _definition(name, fields, body, path)


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The ``key: value`` lines between the opening and closing ``---``, and the body after them."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise DefinitionError("it does not start with a '---' line (front matter)")
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        if stripped == "---":
            return fields, "".join(lines[number:]).strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, colon, value = stripped.partition(":")
        key = key.strip()
        if not colon or not key:
            raise DefinitionError(f"line {number} is not 'key: value'")
        if key not in _KEYS:
            raise DefinitionError(f"unknown key {key!r} on line {number} (keys: {', '.join(_KEYS)})")
        if key in fields:
            raise DefinitionError(f"{key!r} is given twice")
        fields[key] = _unquote(value.strip())
    raise DefinitionError("the front matter has no closing '---' line")


def _definition(name: str, fields: dict[str, str], body: str, path: Path) -> Definition:
    description = fields.get("description", "")
    if not description:
        raise DefinitionError("'description' is required")
    size = len(body.encode())
    if size > MAX_PROMPT_BYTES:
        raise DefinitionError(f"the prompt is {size} bytes; at most {MAX_PROMPT_BYTES}")
    policy = fields.get("headless_policy") or None
    if policy is not None and policy not in HEADLESS_POLICIES:
        raise DefinitionError(f"headless_policy {policy!r} is not one of {', '.join(HEADLESS_POLICIES)}")
    tools = _tools(fields["tools"]) if "tools" in fields else None
    names = _tools(fields["names"]) if "names" in fields else None
    return Definition(
        name=name,
        description=description,
        prompt=body,
        model=fields.get("model") or None,
        mode=fields.get("mode") or None,
        tools=tools,
        headless_policy=policy,
        source=path,
        names=names,
        host=fields.get("host") or None,
    )


def _tools(value: str) -> tuple[str, ...]:
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    if "[" in inner or "]" in inner:
        raise DefinitionError(f"tools {value!r} is not a list like [read, grep] or read, grep")
    return tuple(t for t in (_unquote(part.strip()) for part in inner.split(",")) if t)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value

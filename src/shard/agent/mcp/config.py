"""``[[mcp_servers]]`` in config.toml: parsed with the stdlib only (it runs before hello), every
mistake one :class:`~shard.agent.config.mistakes.Mistake` naming the key.

A server is either stdio (``command``, ``args``, ``env``, ``pass_env``) or streamable HTTP (``url``,
``headers_env``: header name → the environment variable its value is read from when the server
starts, so no token is written in config.toml).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from shard.agent.config.mistakes import KeyPath, Mistake

DEFAULT_START_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 120.0
SERVER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,31}")  # no "__": it splits server__tool
_LOCALE = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STDIO_KEYS = ("command", "args", "env", "pass_env")
_HTTP_KEYS = ("url", "headers_env")
KEYS = ("name", *_STDIO_KEYS, *_HTTP_KEYS, "start_timeout", "call_timeout", "trust_read_only")


class McpServerConfig(NamedTuple):
    name: str
    command: str | None = None  # stdio: the program to run (in the agent's working directory)
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # stdio: set in the server's (otherwise minimal) environment
    pass_env: tuple[str, ...] = ()  # stdio: variables handed on from the agent's environment, by name
    url: str | None = None  # streamable HTTP endpoint
    headers_env: tuple[tuple[str, str], ...] = ()  # HTTP: header → environment variable holding its value
    start_timeout: float = DEFAULT_START_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    trust_read_only: bool = True  # a tool the server marks readOnlyHint runs without asking

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def target(self) -> str:
        """Where the server is, for people: the command line or the URL."""
        return " ".join((self.command or "", *self.args)) if self.command is not None else str(self.url)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """A stdio server's environment beyond the SDK's own minimal one (HOME, LOGNAME, PATH, SHELL,
        TERM, USER): the locale and temp folder, what ``pass_env`` names, and ``env``. Never the
        agent's whole environment: it holds the provider API keys."""
        passed = {k: environ[k] for k in (*_LOCALE, *self.pass_env) if k in environ}
        return passed | dict(self.env)

    def headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        """An HTTP server's headers, each read from its environment variable now; a missing one is
        a :class:`LookupError` naming the variable (never a value)."""
        out = {}
        for header, variable in self.headers_env:
            if not environ.get(variable):
                raise LookupError(f"header {header} comes from ${variable}, which is not set")
            out[header] = environ[variable]
        return out


def parse_servers(raw: object) -> tuple[McpServerConfig, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise Mistake(("mcp_servers",), "must be a list of tables ([[mcp_servers]])")
    servers: list[McpServerConfig] = []
    for i, table in enumerate(raw):
        server = _server(table, ("mcp_servers", i))
        if any(s.name == server.name for s in servers):
            raise Mistake(("mcp_servers", i, "name"), f"{server.name!r} is defined twice")
        servers.append(server)
    return tuple(servers)


def _server(table: object, at: KeyPath) -> McpServerConfig:
    if not isinstance(table, dict):
        raise Mistake(at, "must be a table")
    for key, value in table.items():
        if key not in KEYS:
            raise Mistake((*at, key), known={k: k for k in KEYS}, value=value)
    if "name" not in table:
        raise Mistake((*at, "name"), "is required", line_at=at)
    name = _get(table, "name", str, at)
    if not SERVER_NAME.fullmatch(name):
        raise Mistake((*at, "name"), f"must be 1-32 letters, digits, '-' or '_' (no '__'), got {name!r}")
    command, url = _get(table, "command", str, at), _get(table, "url", str, at)
    if (command is None) == (url is None):
        problem = "cannot have both command and url" if command else "needs command (stdio) or url (HTTP)"
        raise Mistake(at, problem)
    wrong = [k for k in (_HTTP_KEYS if command is not None else _STDIO_KEYS) if k in table]
    if wrong:
        kind = "a stdio server (command)" if command is not None else "an HTTP server (url)"
        raise Mistake((*at, wrong[0]), f"does not apply to {kind}")
    if command is not None and not command.strip():
        raise Mistake((*at, "command"), "must not be empty")
    if url is not None and not url.startswith(("http://", "https://")):
        raise Mistake((*at, "url"), f"must be an http:// or https:// URL, got {url!r}")
    args = _get(table, "args", list, at) or []
    if not all(isinstance(a, str) for a in args):
        raise Mistake((*at, "args"), "must be a list of strings")
    pass_env = _get(table, "pass_env", list, at) or []
    if not all(isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in pass_env):
        raise Mistake((*at, "pass_env"), "must be a list of environment variable names")
    return McpServerConfig(
        name=name,
        command=command,
        args=tuple(args),
        env=_strings(table, "env", at, names_values=False),
        pass_env=tuple(pass_env),
        url=url,
        headers_env=_strings(table, "headers_env", at, names_values=True),
        start_timeout=_seconds(table, "start_timeout", at, DEFAULT_START_TIMEOUT),
        call_timeout=_seconds(table, "call_timeout", at, DEFAULT_CALL_TIMEOUT),
        trust_read_only=_get(table, "trust_read_only", bool, at) is not False,
    )


def _strings(
    table: dict[str, Any], key: str, at: KeyPath, *, names_values: bool
) -> tuple[tuple[str, str], ...]:
    """A table of strings (``env``), or of environment variable names (``headers_env``)."""
    value = _get(table, key, dict, at) or {}
    for k, v in value.items():
        if not isinstance(v, str):
            raise Mistake((*at, key, k), "must be a string")
        if names_values and not _ENV_NAME.fullmatch(v):
            raise Mistake((*at, key, k), f"must name an environment variable, got {v!r}")
    return tuple(value.items())


def _seconds(table: dict[str, Any], key: str, at: KeyPath, default: float) -> float:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise Mistake((*at, key), "must be a positive number of seconds")
    return float(value)


_KINDS = {str: "a string", list: "a list", dict: "a table", bool: "true or false"}
_GOT = {bool: "a boolean", int: "an integer", float: "a decimal number", **_KINDS}


def _get(table: dict[str, Any], key: str, typ: type, at: KeyPath) -> Any:
    value = table.get(key)
    if value is not None and not isinstance(value, typ):
        raise Mistake((*at, key), f"must be {_KINDS[typ]}, got {_GOT.get(type(value), 'a date or time')}")
    return value

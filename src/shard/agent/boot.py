"""Start-up of a runtime, in two phases so that ``hello`` goes out fast.

Phase A (this module) uses only the stdlib and the pydantic-free parts of Shard: it reads
config.toml, opens or creates the session, decides the model and mode, replays the session's live
window as plain dicts, and writes ``hello`` and ``sync`` itself. Phase B (``shard.agent.stdio``)
imports asyncio, pydantic and the runtime, validates the same session into models (the authoritative
check: a message that does not validate is a fatal SESSION_CORRUPT after all) and serves commands. A
client therefore renders a restored session without waiting for those imports.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from shard import _secrets
from shard._home import HomeError, prepare_home
from shard._version import PROTOCOL_VERSION, __version__
from shard.agent.catalog import (
    BUILTIN_KEY_VARIABLES,
    ModelCatalog,
    ModelEntry,
    capabilities_for,
    descriptor,
    key_variables,
)
from shard.agent.config.settings import Config, ConfigError, config_from_text, load_config, shard_home
from shard.agent.modes import BUILTIN_MODES
from shard.agent.prompting.definitions import MAX_PROMPT_BYTES
from shard.agent.prompting.instructions import session_context
from shard.agent.providers.backends import prepare_sdk_import
from shard.agent.sandbox.bwrap import for_config
from shard.agent.session.store import SessionStore, find_session
from shard.agent.session.unfinished import unfinished
from shard.agent.session.window import WindowError, replay
from shard.protocol.errors import ErrorCode, ShardError, shown
from shard.protocol.ids import is_session_id


class StartupError(Exception):
    """The runtime cannot start; ``message`` goes to stderr and the process exits with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class AgentOptions(NamedTuple):
    home: str | None = None
    cwd: str | None = None
    session: str | None = None
    model: str | None = None
    mode: str | None = None
    headless_policy: str = "deny"
    create: bool = False  # with session: create it (with that id) when it does not exist yet
    tools: tuple[str, ...] | None = None  # an allow-list of tool names; None: all
    sandbox: str | None = None  # off | ask | auto: this agent's, over [sandbox] mode
    delegated: bool = False  # a new session is a background child's (--delegated): no title from its task
    agent_id: str | None = None  # the durable agent a daemon hosts here (--agent-id)
    system_prompt_file: str | None = None  # a delegated child's instructions, written by the daemon
    handoff: bool = False  # keys, config and instructions come first on stdin (a runtime on a host)


class Prepared:
    """What phase A decided, handed to the runtime."""

    def __init__(
        self,
        config: Config,
        catalog: ModelCatalog,
        store: SessionStore,
        cwd: Path,
        model: ModelEntry | None,
        mode: str,
        reasoning: str | None,
        options: AgentOptions,
        *,
        model_changed: bool = False,
        mode_changed: bool = False,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.store = store
        self.cwd = cwd
        self.model = model
        self.mode = mode
        self.reasoning = reasoning
        self.options = options
        self.instructions: str | None = None  # a delegated child's, appended to the system prompt
        # Changes the command line makes to a restored session, recorded once the runtime is up.
        self.model_changed = model_changed
        self.mode_changed = mode_changed
        # A reply or a tool call the session's last runtime died in the middle of: shown closed in
        # phase A's sync, recorded by the runtime once the session validated (Runtime.from_prepared).
        self.unfinished = unfinished(store.entries) if store.exists else []
        try:
            self.window = replay(store.entries + self.unfinished)
        except WindowError as exc:
            raise ShardError(
                ErrorCode.SESSION_CORRUPT, f"session {store.path} cannot be restored: {exc}"
            ) from None


def prepare(opts: AgentOptions) -> Prepared:
    """Phase A. Raises StartupError (bad config or arguments) or ShardError (session problems)."""
    received: dict[str, object] = {}
    if opts.handoff:
        try:
            received = _secrets.inherit_stream(0)
        except (OSError, ValueError) as exc:
            raise StartupError(f"--handoff: {exc}") from None
        prompt = received.get("system_prompt")
        instructions = prompt.strip() or None if isinstance(prompt, str) else None
    else:
        instructions = read_instructions(opts.system_prompt_file)  # a bad file stops before any session
    config_text = received.get("config")
    prepared = _prepare(opts, config_text if isinstance(config_text, str) else None)
    prepared.instructions = instructions
    return prepared


def _prepare(opts: AgentOptions, config_text: str | None = None) -> Prepared:
    """``config_text``: the daemon's config.toml, handed to a runtime on another host."""
    prepare_sdk_import()  # before anything (``shard run`` too) starts importing an SDK
    _secrets.inherit()  # keys a daemon handed over, then the ones in the environment
    _secrets.capture(BUILTIN_KEY_VARIABLES)
    home = shard_home(opts.home)
    try:
        notice = prepare_home(home)
    except HomeError as exc:
        raise StartupError(exc.message) from None
    if notice is not None:
        print(f"shard: {notice}", file=sys.stderr)
    try:
        if config_text is None:
            config = load_config(home)
        else:
            config = config_from_text(config_text, home, Path("the daemon's config.toml"))
    except ConfigError as exc:
        raise StartupError(exc.message) from None
    _secrets.capture(key_variables(config))  # before anything can run a command that would see them
    if opts.sandbox is not None:
        config = config._replace(sandbox=config.sandbox._replace(mode=opts.sandbox))
    sandbox = for_config(config)
    if sandbox.mode != "off" and not sandbox.active:  # said once; commands ask as before
        print(f"shard: no sandbox: {sandbox.why}; every command asks instead", file=sys.stderr)
    catalog = ModelCatalog(config)
    mode_names = [m.name for m in BUILTIN_MODES]
    if opts.mode is not None and opts.mode not in mode_names:
        raise StartupError(f"unknown mode {shown(opts.mode)} (modes: {', '.join(mode_names)})")
    flag_model = _resolve_flag_model(catalog, opts.model)
    if opts.session is not None:
        try:
            return _restore(opts, config, catalog, flag_model)
        except ShardError as exc:
            if not (opts.create and exc.code == ErrorCode.NOT_FOUND):
                raise
    cwd = _check_cwd(opts.cwd or os.getcwd())
    model = flag_model or _config_default(catalog)
    mode = opts.mode or "build"
    if opts.session is not None and not is_session_id(opts.session):
        raise StartupError(f"{shown(opts.session)} is not a session id (sess-…)")
    store = SessionStore.new(
        home,
        cwd=str(cwd),
        model=model.id if model else None,
        mode=mode,
        session_id=opts.session,
        delegated=opts.delegated,
        context=session_context(cwd, home),
    )
    reasoning = model.default_reasoning if model else None
    return Prepared(config, catalog, store, cwd, model, mode, reasoning, opts)


def _restore(
    opts: AgentOptions, config: Config, catalog: ModelCatalog, flag_model: ModelEntry | None
) -> Prepared:
    assert opts.session is not None
    store = SessionStore.open(find_session(config.home, opts.session))
    header = store.header
    cwd = Path(header.get("cwd") or "")
    if opts.cwd is not None and os.path.realpath(opts.cwd) != os.path.realpath(cwd):
        raise StartupError(f"session {store.session_id} belongs to {cwd}, not {opts.cwd}")
    if not cwd.is_dir():
        raise StartupError(f"the working directory of session {store.session_id}, {cwd}, is gone")
    # The session's own choices win over config defaults; the command line wins over both.
    last_model = store.last("model_change")
    recorded = (last_model or {}).get("model", header.get("model"))
    model = catalog.resolve(recorded) if isinstance(recorded, str) else None
    if recorded and model is None:
        print(
            f"shard: model {recorded!r} of session {store.session_id} is no longer in the catalog; "
            "using the default",
            file=sys.stderr,
        )
        model = _config_default(catalog)
    reasoning = _recorded_reasoning(store, model)
    model_changed = False
    if flag_model is not None and (model is None or flag_model.id != model.id):
        model, reasoning, model_changed = flag_model, flag_model.default_reasoning, True
    last_mode = store.last("mode_change")
    recorded_mode = (last_mode or {}).get("mode", header.get("mode")) or "build"
    if recorded_mode not in {m.name for m in BUILTIN_MODES}:
        recorded_mode = "build"
    mode = opts.mode or recorded_mode
    return Prepared(
        config,
        catalog,
        store,
        cwd,
        model,
        mode,
        reasoning,
        opts,
        model_changed=model_changed,
        mode_changed=mode != recorded_mode,
    )


def read_instructions(path: str | None) -> str | None:
    """The text of ``--system-prompt-file``, read at each start: at most MAX_PROMPT_BYTES of UTF-8."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PROMPT_BYTES + 1)
    except OSError as exc:
        raise StartupError(f"--system-prompt-file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_PROMPT_BYTES:
        raise StartupError(f"--system-prompt-file {path} is larger than {MAX_PROMPT_BYTES} bytes")
    try:
        return data.decode("utf-8-sig").strip() or None
    except UnicodeDecodeError:
        raise StartupError(f"--system-prompt-file {path} is not UTF-8 text") from None


def _recorded_reasoning(store: SessionStore, model: ModelEntry | None) -> str | None:
    if model is None or not model.has_reasoning:
        return None
    ids = {lv.id for lv in model.model.reasoning_levels}
    for entry in reversed(store.entries):
        if entry["kind"] in ("reasoning_change", "model_change") and entry.get("model") == model.id:
            value = entry.get("reasoning")
            return value if value in ids else model.default_reasoning
    return model.default_reasoning


def _resolve_flag_model(catalog: ModelCatalog, selection: str | None) -> ModelEntry | None:
    if selection is None:
        return None
    entry = catalog.resolve(selection)
    if entry is None:
        raise StartupError(catalog.unknown(selection))
    return entry


def _config_default(catalog: ModelCatalog) -> ModelEntry | None:
    mistake = catalog.default_mistake()
    if mistake is not None:
        raise StartupError(mistake)
    return catalog.resolve(catalog.default_selection) if catalog.default_selection else None


def _check_cwd(raw: str) -> Path:
    path = Path(os.path.realpath(os.path.expanduser(raw)))
    if not path.is_dir():
        raise StartupError(f"working directory {raw} does not exist or is not a directory")
    return path


def hello_line(model: ModelEntry | None, config: Config | None = None) -> bytes:
    """The ``hello`` event as a JSONL line, without pydantic (tests check it against the model)."""
    extra = for_config(config).capabilities() if config is not None else []
    hello = {
        "type": "hello",
        "protocol_version": PROTOCOL_VERSION,
        "server_version": __version__,
        "capabilities": capabilities_for(model, extra),
    }
    return _line(hello)


def sync_line(prepared: Prepared) -> bytes:
    """The ``sync`` event from phase A's decisions and the dict window (tests check it against the
    runtime's own ``sync``)."""
    live: dict[str, Any] = {"messages": prepared.window.messages()}
    if prepared.window.compaction_index is not None:
        live["compaction_index"] = prepared.window.compaction_index
    if prepared.window.turns:
        live["turns"] = prepared.window.turns
    sync = {
        "type": "sync",
        "status": "idle",
        "mode": prepared.mode,
        "capabilities": capabilities_for(prepared.model, for_config(prepared.config).capabilities()),
        "live_window": live,
        "pending_requests": [],
        "session_id": prepared.store.session_id,
        "queue": [],  # a fresh runtime has nothing queued
    }
    if prepared.store.header.get("context_files"):
        sync["instructions"] = prepared.store.header["context_files"]
    if prepared.model is not None:
        sync["model"] = descriptor(prepared.model)
    return _line(sync)


def error_line(error: ShardError, *, fatal: bool) -> bytes:
    event: dict[str, Any] = {"type": "error", "code": error.code.value, "message": error.message}
    event["fatal"] = fatal
    return _line(event)


def _line(obj: dict[str, Any]) -> bytes:
    # A restored session is large: orjson (loaded by the session store for it) is much faster there;
    # a new session has nothing to encode and need not pay orjson's import before hello.
    orjson = sys.modules.get("orjson")
    if orjson is not None:
        return orjson.dumps(obj) + b"\n"
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]

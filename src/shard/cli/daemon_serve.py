"""``shard daemon`` once its warm template has started (``cli/daemon.py``): prepare SHARD_HOME, read
and check config.toml, take the keys, then serve until shut down.

Every config.toml mistake stops the daemon here with its one line (exit 1), rather than failing each
runtime it starts: what ``load_config`` refuses, and a ``default_model`` that is not in the catalog.
Tool extensions are imported by the runtimes (from the agent's working directory), not checked here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from shard import _secrets
from shard._home import HomeError, prepare_home, shard_home
from shard._trace import mark
from shard.agent.catalog import BUILTIN_KEY_VARIABLES, DEMO_MODEL, ModelCatalog, key_variables
from shard.agent.config.settings import Config, ConfigError, load_config

if TYPE_CHECKING:
    from shard._hosts import HostConfig
    from shard.daemon.catalog import Catalog
    from shard.daemon.early_template import EarlyTemplate
    from shard.daemon.jobs.settings import Catalogs, Definitions, Hosts, JobSettings


def serve(args: argparse.Namespace, early: EarlyTemplate | None) -> int:
    """Everything after the template's start: config.toml, the keys, the checks, the daemon."""
    from shard.daemon.web.config import WebConfigError, WebFlags, plan

    try:  # before listening: an unsafe remote configuration never gets as far as that
        web = plan(
            WebFlags(
                web_host=args.web_host,
                public_host=args.public_host,
                allowed_origins=tuple(args.allowed_origin),
                allow_insecure_remote=args.allow_insecure_remote,
                trust_proxy=args.trust_proxy,
                proto_header=args.forwarded_proto_header,
                host_header=args.forwarded_host_header,
            )
        )
    except WebConfigError as exc:
        print(f"shard daemon: refusing to start: {exc.message}", file=sys.stderr)
        return 1
    _secrets.capture(BUILTIN_KEY_VARIABLES)
    home = shard_home(args.home)
    try:
        notice = prepare_home(home)
        config = load_config(home)  # refused here, once, rather than by every runtime it would start
    except (HomeError, ConfigError) as exc:
        print(f"shard daemon: {exc.message}", file=sys.stderr)
        return 1
    # The daemon takes the keys its runtimes will need now; they reach them through a pipe.
    _secrets.capture(key_variables(config))
    catalog = ModelCatalog(config)
    mistake = catalog.default_mistake()  # else every runtime would fail to start on it
    if mistake is not None:
        print(f"shard daemon: {mistake}", file=sys.stderr)
        return 1
    # With nothing configured the daemon still does something: its agents run the offline demo, said
    # once here (and by the model name every client shows), rather than failing their first prompt.
    fallback_model = None if catalog.default_selection is not None else DEMO_MODEL
    if fallback_model is not None:
        print(f"shard daemon: {_no_default(config)}", file=sys.stderr)
    if notice is not None:
        print(f"shard daemon: {notice}", file=sys.stderr)
    warm_pool = config.warm_start and not args.cold_start
    if not warm_pool and early is not None:
        early.close()  # warm_start = false: it exits before it has imported much
        early = None
    # the daemon's own imports (the broker, the protocol, the web front) while the template imports
    import asyncio

    from shard.daemon.limits import DEFAULT_MAX_RUNTIMES
    from shard.daemon.server import StartError, run
    from shard.daemon.web.tickets import TICKET_TTL

    mark("daemon: imports")
    try:
        return asyncio.run(
            run(
                home,
                port=args.port,
                idle_timeout=args.idle_runtime_timeout,
                ping_interval=args.ws_ping_interval,
                outbound_cap=args.outbound_cap,
                max_runtimes=args.max_runtimes or config.max_runtimes or DEFAULT_MAX_RUNTIMES,
                max_input=args.max_input_bytes or config.max_input_bytes,
                web=web,
                ticket_ttl=TICKET_TTL if args.ws_ticket_ttl is None else args.ws_ticket_ttl,
                fallback_model=fallback_model,
                jobs=job_settings(home, config, args.run_timeout),
                warm_pool=warm_pool,
                early_template=early,
            )
        )
    except StartError as exc:
        print(f"shard daemon: {exc}", file=sys.stderr)
        return 1


def _no_default(config: Config) -> str:
    """Why new agents run the offline demo: no model at all, or models but no ``default_model``."""
    demo = f"new agents use {DEMO_MODEL}, Shard's offline demo (a fixed script, not an LLM)"
    configured = [f"{p.name}/{m.id}" for p in config.providers for m in p.models]
    if not configured:
        return f"no model is configured: {demo}; README → Configuration adds a real one"
    shown = ", ".join(configured[:5]) + (", …" if len(configured) > 5 else "")
    return (
        f"no default_model in config.toml: {demo}; set default_model to one of the configured "
        f'models ({shown}), e.g. default_model = "{configured[0]}"'
    )


def job_settings(home: Path, config: Config, run_timeout: float | None) -> JobSettings:
    """``[subagents]`` and ``--run-timeout`` as the daemon takes them."""
    from shard.daemon.jobs.settings import DEFAULT_MAX_CHILDREN, DEFAULT_POLICY, JobSettings
    from shard.protocol.jobs import LaunchPolicy

    sub = config.subagents
    policy = LaunchPolicy(
        maxTasks=sub.max_tasks or DEFAULT_POLICY.maxTasks, maxDepth=sub.max_depth or DEFAULT_POLICY.maxDepth
    )
    return JobSettings(
        policy=policy,
        run_timeout=run_timeout or sub.run_timeout,
        max_children=sub.max_children or DEFAULT_MAX_CHILDREN,
        definitions=_definitions(home),
        catalog=_catalog(home, config),
        hosts=_hosts(home, config),
    )


def _hosts(home: Path, config: Config) -> Hosts:
    """The [[hosts]] entries as config.toml says now (read again when it changed; an edit that
    breaks it keeps the last good ones)."""
    path = home / "config.toml"
    seen: list[tuple[object, dict[str, HostConfig]]] = []

    def find(name: str) -> HostConfig | None:
        now = _stamp(path)
        if not seen or now != seen[-1][0]:
            try:
                hosts = {h.name: h for h in load_config(home).hosts}
            except ConfigError:
                hosts = seen[-1][1] if seen else {h.name: h for h in config.hosts}
            seen[:] = [(now, hosts)]
        return seen[-1][1].get(name)

    return find


def _catalog(home: Path, config: Config) -> Catalogs:
    """What new agents are checked against (``shard.daemon.catalog``): the models of config.toml and
    of the keys the daemon holds, the modes, and the tools a runtime offers (their names only: no tool
    is imported). Built at the first check, and again whenever config.toml changed, as a
    runtime would read it; an edit that breaks it keeps the last good one (a runtime says why)."""
    path = home / "config.toml"
    seen: list[tuple[object, Catalog]] = []

    def current() -> Catalog:
        now = _stamp(path)
        if not seen or now != seen[-1][0]:
            try:
                catalog = _build(load_config(home))
            except ConfigError:
                catalog = seen[-1][1] if seen else _build(config)  # the one read at start
            seen[:] = [(now, catalog)]
        return seen[-1][1]

    return current


def _build(config: Config) -> Catalog:
    from shard.agent.modes import BUILTIN_MODES
    from shard.agent.tools import names
    from shard.daemon.catalog import Catalog

    models = ModelCatalog(config)
    return Catalog(
        models=tuple((e.provider.name, e.model.id) for e in models.entries),
        modes=tuple(m.name for m in BUILTIN_MODES),
        tools=frozenset({*names.BUILTIN, names.RECALL, *names.SUBAGENT}),  # not the tools: 35-40 ms
        mcp_servers=frozenset(s.name for s in config.mcp_servers),
        open_tools=bool(config.tool_extensions),
        unknown_model=models.unknown,
        hosts=frozenset(h.name for h in config.hosts),
        own_config_hosts=frozenset(h.name for h in config.hosts if h.config == "remote"),
    )


def _stamp(path: Path) -> object:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _definitions(home: Path) -> Definitions:
    """The daemon's view of agent definitions: read afresh at each launch (an edit applies to the
    next one), a broken file said once on stderr and skipped."""
    from shard.agent.prompting.definitions import load_definitions
    from shard.daemon.jobs.children import ChildSpec

    said: set[str] = set()

    def find(cwd: str, name: str) -> ChildSpec | None:
        found, problems = load_definitions(Path(cwd), home)
        for problem in problems:
            if problem not in said:
                said.add(problem)
                print(f"shard daemon: {problem}", file=sys.stderr, flush=True)
        definition = found.get(name.lower())
        if definition is None:
            return None
        return ChildSpec(
            name=definition.name,
            prompt=definition.prompt,
            model=definition.model,
            mode=definition.mode,
            tools=definition.tools,
            headless_policy=definition.headless_policy,
            names=definition.names,
            host=definition.host,
        )

    return find

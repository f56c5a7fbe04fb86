"""The ``shard`` command line's parser (DESIGN §5): every command, its options and their help.

A command's parser is built alone for a line that names it (``build_parser(only)``): each subparser
costs ~0.4 ms, most of it argparse looking up the translation of each of its messages on disk.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, NoReturn

from shard._version import PROTOCOL_VERSION, __version__
from shard.daemon.limits import DEFAULT_MAX_RUNTIMES
from shard.protocol.framing import DEFAULT_OUTBOUND_CAP
from shard.protocol.headless import HEADLESS_POLICIES

if TYPE_CHECKING:
    from collections.abc import Callable

    _Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


class _Parser(argparse.ArgumentParser):
    """A command-line mistake is one line on stderr (and exit status 2), naming where help is."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _agent_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    p.add_argument("--cwd", help="working directory of a new session (default: the current one)")
    p.add_argument("--session", help="restore this session id instead of starting a new one")
    p.add_argument("--model", help="model to use: <provider>/<model> or a catalog id")
    p.add_argument("--mode", help="mode to start in: build or plan")
    p.add_argument(
        "--create",
        action="store_true",
        help="with --session: start that session (with that id) if it does not exist yet",
    )
    p.add_argument("--tools", help="comma-separated allow-list of the tools to offer (default: all)")
    p.add_argument(
        "--headless-policy",
        choices=HEADLESS_POLICIES,
        default="deny",
        help="how permission asks are answered when no client can answer (default: deny)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``shard`` command line; with ``only`` (a command's name), that command's alone — what
    ``shard.cli.main.main`` builds for a line that names it: the same parse and the same messages, without
    the other commands' ~20 subparsers (~8 ms: argparse looks up each message's translation on disk).
    """
    parser = _Parser(prog="shard", description="Host LLM coding agents and drive them from many clients.")
    # the protocol too: `shard hosts check` compares it with the daemon's before any agent starts
    parser.add_argument(
        "--version", action="version", version=f"shard {__version__} (protocol {PROTOCOL_VERSION})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in COMMANDS.items():
        if only is None or name == only:
            add(sub)
    return parser


def _add_agent(sub: _Subparsers) -> None:
    agent = sub.add_parser("agent", help="run one agent on a direct connection")
    agent.add_argument(
        "--stdio", action="store_true", required=True, help="speak the protocol on stdin/stdout"
    )
    _agent_flags(agent)
    agent.add_argument(
        "--sandbox",
        choices=("off", "ask", "auto"),
        help="run bash in a bubblewrap sandbox: auto runs confined commands without asking; ask "
        "confines them and still asks; off: no sandbox (default: [sandbox] mode in config.toml, else off)",
    )
    # Set by the daemon for the runtimes it hosts (DESIGN §2): the durable agent id, and a file with a
    # delegated child's instructions. Not for people, so not in --help.
    agent.add_argument("--agent-id", help=argparse.SUPPRESS)
    agent.add_argument("--system-prompt-file", help=argparse.SUPPRESS)
    agent.add_argument("--delegated", action="store_true", help=argparse.SUPPRESS)
    # A runtime a daemon starts on another host reads its keys, config and instructions from stdin
    # ahead of the protocol (shard.daemon.hosts): nothing of them on that host's disk.
    agent.add_argument("--handoff", action="store_true", help=argparse.SUPPRESS)


def _add_run(sub: _Subparsers) -> None:
    run = sub.add_parser("run", help="headless one-shot: run one prompt and print the answer")
    run.add_argument(
        "prompt",
        nargs="?",
        help="the prompt; left out (with stdin not a terminal) or '-': read from stdin (echo … | shard run)",
    )
    run.add_argument("--json", action="store_true", help="print the event stream as JSONL")
    run.add_argument(
        "--allow",
        action="append",
        metavar="TOOL|bash:COMMAND",
        help="let this run use TOOL inside the working directory without asking, or run shell "
        "commands like COMMAND (the gate's own signature rule); repeatable",
    )
    run.add_argument(
        "--sandbox",
        action="store_const",
        const="auto",
        help="run bash confined (bubblewrap: writes only in the project, no network, no Shard process "
        "visible) and without asking; where no sandbox can be made, commands are refused as usual",
    )
    run.add_argument(
        "--yes-to-all",
        action="store_true",
        help="let this run do ANYTHING without asking: every write, command and path outside",
    )
    run.add_argument(
        "--keep",
        action="store_true",
        help="when a daemon runs the prompt: keep its agent afterwards (to open in the web client or "
        "shard attach); by default it is removed, and its session kept either way",
    )
    run.add_argument(
        "--direct",
        action="store_true",
        help="run in this process even when a daemon is running on this SHARD_HOME (runs with --allow "
        "or --yes-to-all always do)",
    )
    run.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session of this working directory (see shard sessions)",
    )
    _agent_flags(run)


def _add_daemon(sub: _Subparsers) -> None:
    daemon = sub.add_parser("daemon", help="host agents for many clients (unix socket + WebSocket)")
    daemon.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    daemon.add_argument(
        "--port", type=int, default=7433, help="WebSocket port on 127.0.0.1 (0: any free one)"
    )
    daemon.add_argument(
        "--idle-runtime-timeout",
        type=float,
        default=600.0,
        help="seconds an idle agent's runtime lives before it is stopped (restored on demand)",
    )
    daemon.add_argument(
        "--ws-ping-interval",
        type=float,
        default=30.0,
        help="seconds between WebSocket pings; a client that misses the pong is dropped",
    )
    daemon.add_argument(
        "--outbound-cap",
        type=int,
        default=DEFAULT_OUTBOUND_CAP,
        help="bytes queued for one client before it is dropped as too slow",
    )
    daemon.add_argument(
        "--max-runtimes",
        type=_positive_int,
        help="runtime processes alive at once; at the limit the one idle longest is stopped to make "
        f"room (default: [daemon] max_runtimes in config.toml, else {DEFAULT_MAX_RUNTIMES})",
    )
    daemon.add_argument(
        "--run-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="seconds a subagent run may take before it is timed_out (default: [subagents] run_timeout"
        " in config.toml, else no limit)",
    )
    daemon.add_argument(
        "--cold-start",
        action="store_true",
        help="spawn every runtime as a fresh process instead of forking it from the warm, pre-imported "
        "template (default: [daemon] warm_start in config.toml, else warm)",
    )
    daemon.add_argument(
        "--max-input-bytes",
        type=_input_cap,
        help="largest message a client may send (a JSONL line or a WebSocket message); a bigger one "
        "is answered INVALID_REQUEST and the connection stays (at least 1024; default: [limits] "
        "max_input_bytes in config.toml, else 64 MiB)",
    )

    _web_flags(daemon)


def _add_web(sub: _Subparsers) -> None:
    web = sub.add_parser("web", help="browser access: enroll a browser, list or revoke its sessions")
    web.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    web_actions = web.add_subparsers(dest="action", metavar="ACTION", required=True)
    web_actions.add_parser("enroll", help="print a new single-use enrollment link (10 minutes)")
    web_actions.add_parser("sessions", help="list enrolled browser sessions")
    revoke = web_actions.add_parser("revoke", help="revoke a browser session (its sockets close)")
    revoke.add_argument("session_id", metavar="ID", help="the session id (see shard web sessions)")
    for action in web_actions.choices.values():
        action.add_argument("--home", default=argparse.SUPPRESS, help="SHARD_HOME")


def _add_sessions(sub: _Subparsers) -> None:
    sessions = sub.add_parser("sessions", help="list saved sessions (newest first); show or remove one")
    sessions.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    sessions.add_argument("--json", action="store_true", help="one JSON object a line")
    where = sessions.add_mutually_exclusive_group()
    where.add_argument("--cwd", metavar="DIR", help="only the sessions whose working directory is DIR")
    where.add_argument("--here", action="store_true", help="only the sessions of the current directory")
    actions = sessions.add_subparsers(dest="action", metavar="ACTION")
    show = actions.add_parser("show", help="print a session's conversation")
    show.add_argument("session_id", metavar="ID", help="the session id (sess-…)")
    show.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the raw entries (JSONL)"
    )
    rm = actions.add_parser("rm", help="remove a session (refused while it is in use)")
    rm.add_argument("session_id", metavar="ID", help="the session id (sess-…)")
    rm.add_argument("--forks", action="store_true", help="also remove the session's forks")
    for action in (show, rm):  # SUPPRESS: the action's own defaults must not undo `sessions --home H`
        action.add_argument("--home", default=argparse.SUPPRESS, help="SHARD_HOME")


def _add_acp(sub: _Subparsers) -> None:
    acp = sub.add_parser("acp", help="serve agents to an editor over ACP (Agent Client Protocol), on stdio")
    acp.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    acp.add_argument("--cwd", metavar="DIR", help="run every session in DIR, whatever the editor sends")
    acp.add_argument(
        "--direct",
        action="store_true",
        help="run each session in its own agent process even when a daemon is running",
    )


def _add_mcp(sub: _Subparsers) -> None:
    mcp = sub.add_parser("mcp", help="MCP servers configured in config.toml ([[mcp_servers]])")
    mcp_actions = mcp.add_subparsers(dest="action", metavar="ACTION", required=True)
    mcp_list = mcp_actions.add_parser("list", help="start each server briefly and list its tools")
    mcp_list.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    mcp_list.add_argument("--json", action="store_true", help="one JSON object a line, one per server")


def _add_attach(sub: _Subparsers) -> None:
    attach = sub.add_parser("attach", help="the terminal client: the agent list, or one agent's conversation")
    attach.add_argument("agent", nargs="?", metavar="AGENT", help="the agent to open (default: the list)")
    attach.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")


def _add_hosts(sub: _Subparsers) -> None:
    hosts = sub.add_parser("hosts", help="machines agents can run on over SSH ([[hosts]] in config.toml)")
    host_actions = hosts.add_subparsers(dest="action", metavar="ACTION", required=True)
    hosts_list = host_actions.add_parser("list", help="the configured hosts")
    hosts_check = host_actions.add_parser(
        "check", help="reachability, Python, shard, ripgrep, bubblewrap and free space on a host"
    )
    hosts_setup = host_actions.add_parser(
        "setup", help="install this machine's shard on a host over ssh (no internet needed there)"
    )
    hosts_git = host_actions.add_parser(
        "git", help="one workspace git operation, JSON on stdin (what a daemon runs on a host over ssh)"
    )
    hosts_fs = host_actions.add_parser(
        "fs", help="list or read an agent's folder, JSON on stdin (what a daemon runs on a host over ssh)"
    )
    for each in (hosts_list, hosts_check, hosts_setup, hosts_git, hosts_fs):
        each.add_argument("--home", help="SHARD_HOME (default: $SHARD_HOME or ~/.shard)")
    hosts_setup.add_argument(
        "--wheels",
        action="store_true",
        help="fetch wheels for the host's Python here and install them there (the default when its Python "
        "or platform is not this machine's)",
    )
    for each in (hosts_check, hosts_setup):
        each.add_argument("name", metavar="NAME", help="the host's name in config.toml")


def _add_schema(sub: _Subparsers) -> None:
    sub.add_parser("schema", help="print the JSON Schema of the wire protocol")


COMMANDS: dict[str, Callable[[_Subparsers], None]] = {
    "agent": _add_agent,
    "run": _add_run,
    "daemon": _add_daemon,
    "web": _add_web,
    "sessions": _add_sessions,
    "acp": _add_acp,
    "mcp": _add_mcp,
    "attach": _add_attach,
    "hosts": _add_hosts,
    "schema": _add_schema,
}


def _web_flags(daemon: argparse.ArgumentParser) -> None:
    """PROTOCOL §4.1.2: remote mode, opt-in and validated at startup (shard.daemon.web.config)."""
    group = daemon.add_argument_group("remote web access (PROTOCOL §4.1.2; default: loopback only)")
    group.add_argument("--web-host", metavar="IP", help="bind this address instead of 127.0.0.1")
    group.add_argument(
        "--public-host", metavar="HOST:PORT", help="the one Host browsers use (required in remote mode)"
    )
    group.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an exact origin (scheme://host[:port]) allowed to use the daemon; repeatable",
    )
    group.add_argument(
        "--allow-insecure-remote",
        action="store_true",
        help="accept plain-http remote access (the session cookie crosses the network in clear)",
    )
    group.add_argument(
        "--trust-proxy",
        metavar="UPSTREAM",
        help="honor forwarded headers from this peer only: 'loopback' or the proxy's IP",
    )
    group.add_argument("--forwarded-proto-header", metavar="NAME", help="default: X-Forwarded-Proto")
    group.add_argument("--forwarded-host-header", metavar="NAME", help="default: X-Forwarded-Host")
    # For tests only (expiry without a 30 s sleep); documented in docs/ARCHITECTURE.md, not in --help.
    daemon.add_argument("--ws-ticket-ttl", type=float, help=argparse.SUPPRESS)


def _input_cap(value: str) -> int:
    """The same floor as ``[limits] max_input_bytes``: an answer must fit the id it came with."""
    size = int(value)
    if size < 1024:
        raise argparse.ArgumentTypeError("must be at least 1024")
    return size

"""A public testing kit for Shard and for anyone building a client or a tool on it.

* :class:`AgentProcess` — spawns a real ``shard agent --stdio`` and speaks the protocol to it.
* :func:`run_shard` — runs ``shard …`` to its end: exit status, stdout, stderr;
  :func:`start_shard` starts it with its three pipes.
* :func:`write_scripted_home` — a SHARD_HOME whose config points a ``scripted`` provider at a script.
* :class:`SleepTool` — a read-only tool that waits, for exercising abort while a tool runs.
* :class:`FakeClock` — a clock tests advance, for timeouts without sleeping.
* :class:`BrokerHarness` — the daemon's broker in memory (``shard.testing.broker``): memory clients,
  fake runtimes the test drives line by line, timers on a fake clock; no sockets, no processes.
* :class:`Browser` — an enrolled browser (``shard.testing.web``): the real enrollment, cookie,
  ``/bootstrap`` and ticket flow that the daemon's WebSocket requires.
"""

from shard.testing.agent_process import AgentProcess, Runtimes, run_shard, shard_command, start_shard
from shard.testing.broker import BrokerHarness
from shard.testing.clock import FakeClock
from shard.testing.daemon import DaemonProcess, UnixClient, WsClient
from shard.testing.home import recorded_requests, text_step, tool_step, types, write_scripted_home
from shard.testing.tools import AskTool, CrashTool, SleepTool, TouchTool
from shard.testing.web import Browser

__all__ = [
    "AgentProcess",
    "AskTool",
    "BrokerHarness",
    "Browser",
    "CrashTool",
    "DaemonProcess",
    "FakeClock",
    "Runtimes",
    "SleepTool",
    "TouchTool",
    "UnixClient",
    "WsClient",
    "recorded_requests",
    "run_shard",
    "shard_command",
    "start_shard",
    "text_step",
    "tool_step",
    "types",
    "write_scripted_home",
]

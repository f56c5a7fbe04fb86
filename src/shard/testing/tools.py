"""Tools for tests: load them with ``[tools] extensions = ["shard.testing.tools:SleepTool"]``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

from pydantic import Field

from shard.agent.tools.base import Tool, ToolContext, ToolOutput, ToolParams
from shard.agent.tools.paths import resolve
from shard.protocol.content import JsonContent, TextContent


class SleepParams(ToolParams):
    seconds: float = Field(ge=0, le=3600, description="How long to wait.")


class WaitParams(SleepParams):
    until: str | None = Field(default=None, description="Stop waiting once this file exists.")


class SleepTool(Tool[WaitParams]):
    """Waits, then says so. Read-only, so the gate lets it run; abort cancels the wait. With
    ``until``, a test ends the wait by making that file: a step of its own, not a race with a timer."""

    name = "sleep"
    description = "Wait for the given number of seconds (a testing tool)."
    params = WaitParams
    read_only = True

    async def execute(self, args: WaitParams, ctx: ToolContext) -> ToolOutput:
        if args.until is None:
            await asyncio.sleep(args.seconds)
        else:
            deadline = time.monotonic() + args.seconds
            # another process makes the file: nothing in this one could set an Event
            while _waiting(args.until, deadline):  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        return ToolOutput(content=TextContent(text=f"slept {args.seconds} s"))


def _waiting(path: str, deadline: float) -> bool:
    return not os.path.exists(path) and time.monotonic() < deadline


class StuckTool(Tool[SleepParams]):
    """Blocks its runtime's event loop for the given time (``time.sleep``): a runtime that cannot
    answer a signal or a command meanwhile — what the daemon must kill after its grace."""

    name = "stuck"
    description = "Block the whole runtime for the given number of seconds (a testing tool)."
    params = SleepParams
    read_only = True

    async def execute(self, args: SleepParams, ctx: ToolContext) -> ToolOutput:
        time.sleep(args.seconds)  # noqa: ASYNC251 — blocking is the point
        return ToolOutput(content=TextContent(text=f"was stuck {args.seconds} s"))


class CrashParams(ToolParams):
    pass


class CrashTool(Tool[CrashParams]):
    """Raises an unexpected exception: exercises the loop's handling of a tool that crashes."""

    name = "crash"
    description = "Fail with an unexpected error (a testing tool)."
    params = CrashParams
    read_only = True

    async def execute(self, args: CrashParams, ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("the crash tool crashed, as designed")


class TouchParams(ToolParams):
    path: str = Field(description="File to create (empty) or whose time to update.")


class TouchTool(Tool[TouchParams]):
    """A mutating tool (not read-only): creates a file. Exercises modes and the gate."""

    name = "touch"
    description = "Create an empty file (a testing tool)."
    params = TouchParams
    read_only = False

    def touched_paths(self, args: TouchParams, ctx: ToolContext) -> list[Path]:
        return [resolve(ctx.cwd, args.path)]

    async def execute(self, args: TouchParams, ctx: ToolContext) -> ToolOutput:
        resolve(ctx.cwd, args.path).touch()
        return ToolOutput(content=TextContent(text=f"touched {args.path}"))


class AskParams(ToolParams):
    kind: str = Field(description="select, confirm, input, editor or notify")
    title: str | None = None
    message: str | None = None
    options: list[str] | None = None
    prefill: str | None = None
    placeholder: str | None = None
    notify_type: str | None = None


class AskTool(Tool[AskParams]):
    """Asks the user through a ui_request and returns what came back (a testing tool)."""

    name = "ask"
    description = "Ask the user a question (a testing tool)."
    params = AskParams
    read_only = True

    async def execute(self, args: AskParams, ctx: ToolContext) -> ToolOutput:
        assert ctx.ui is not None
        fields = args.model_dump(exclude_none=True, exclude={"kind"})
        answer = await ctx.ui(args.kind, **fields)
        return ToolOutput(content=JsonContent(value={"answer": answer}))


class ProbeParams(ToolParams):
    pass


class ProbeTool(Tool[ProbeParams]):
    """Reports the process the runtime runs in, as its own tools would find it: environment, working
    directory, session and process group, descriptors, signal masks, session locks (a testing tool:
    a forked runtime must be indistinguishable from a spawned one)."""

    name = "probe"
    description = "Describe the runtime's own process (a testing tool)."
    params = ProbeParams
    read_only = True

    async def execute(self, args: ProbeParams, ctx: ToolContext) -> ToolOutput:
        pid = os.getpid()
        fds = {}
        for entry in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                fds[int(entry)] = os.readlink(f"/proc/self/fd/{entry}")
        status = dict(
            line.split(":\t", 1) for line in _read("/proc/self/status").splitlines() if ":\t" in line
        )
        locks = [line.split()[1:4] for line in _read("/proc/locks").splitlines() if f" {pid} " in line]
        value = {
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "pid": pid,
            "sid": os.getsid(0),
            "pgid": os.getpgid(0),
            "fds": {str(fd): target for fd, target in sorted(fds.items())},
            "signals": {k: status[k].strip() for k in ("SigBlk", "SigIgn", "SigCgt")},
            "umask": _umask(),
            "locks": locks,
            "argv": sys.argv[1:],
            "path": sys.path,
            "flags": repr(sys.flags),
        }
        return ToolOutput(content=JsonContent(value=value))


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# The extension tools a test home offers (write_scripted_home's ``extensions``), by import path.
TEST_TOOLS = [
    "shard.testing.tools:SleepTool",
    "shard.testing.tools:TouchTool",
    "shard.testing.tools:AskTool",
]

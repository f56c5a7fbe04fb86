"""bash tool: exit codes, merged output, cwd/env, process-group kill on timeout and on abort,
background children, head/tail truncation with a spill file."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shard.agent.tools.base import ToolContext, ToolOutput
from shard.agent.tools.bash import HEAD_BYTES, TAIL_BYTES, BashTool
from shard.protocol.content import TextContent

WAIT = 10.0  # generous upper bound for anything that should happen promptly


def alive(pid: int) -> bool:
    """Is the process still running (a zombie waiting for its reaper counts as gone)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


async def wait_until(condition: Callable[[], bool], within: float = WAIT) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.01)
    return condition()


@pytest.fixture
def strays() -> Iterator[list[int]]:
    """PIDs a test started; whatever is still alive at the end is killed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def ctx_for(tmp_path: Path, **kw: object) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return ToolContext(cwd=work, spill_dir=tmp_path / "spill", tool_call_id="tc-test", **kw)  # type: ignore[arg-type]


async def run(ctx: ToolContext, command: str, limit: float | None = None) -> ToolOutput:
    tool = BashTool()
    args: dict[str, object] = {"command": command}
    if limit is not None:
        args["timeout"] = limit
    return await asyncio.wait_for(tool.execute(tool.parse(args), ctx), WAIT + (limit or 0))


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, TextContent)
    return out.content.text


@pytest.mark.parametrize(("command", "code"), [("true", 0), ("exit 3", 3), ("false", 1), ("exit 255", 255)])
async def test_exit_code_is_structured(tmp_path: Path, command: str, code: int) -> None:
    """Covers: R9.4.16. The command's exit status is reported in exit_code, not as an error."""
    out = await run(ctx_for(tmp_path), command)
    assert out.exit_code == code
    assert not out.is_error


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGKILL, 137), (signal.SIGTERM, 143), (signal.SIGINT, 130)]
)
async def test_killed_by_a_signal_gives_128_plus_n(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    """Covers: R9.4.16. A command killed by signal N reports exit code 128+N, as shells do."""
    out = await run(ctx_for(tmp_path), f"echo before; kill -{int(sig)} $$")
    assert out.exit_code == code
    assert text_of(out) == "before\n"


async def test_stdout_and_stderr_are_merged_in_order(tmp_path: Path) -> None:
    """stderr goes to the same stream as stdout, in the order written."""
    out = await run(ctx_for(tmp_path), "echo one; echo two >&2; echo three")
    assert text_of(out) == "one\ntwo\nthree\n"


async def test_stdin_is_empty(tmp_path: Path) -> None:
    """stdin is /dev/null: a command reading it gets end of input at once instead of hanging."""
    out = await run(ctx_for(tmp_path), "cat; echo done")
    assert text_of(out) == "done\n"


async def test_runs_in_the_context_cwd(tmp_path: Path) -> None:
    """The command runs in ctx.cwd."""
    ctx = ctx_for(tmp_path)
    (ctx.cwd / "marker.txt").write_text("here")
    out = await run(ctx, "pwd; cat marker.txt")
    assert text_of(out) == f"{ctx.cwd}\nhere"


async def test_env_comes_from_the_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment is ctx.env: its variables are visible, and one removed from it (a secret) is not,
    even though this process has it."""
    monkeypatch.setenv("SHARD_TEST_SECRET", "hunter2")
    env = {k: v for k, v in os.environ.items() if k != "SHARD_TEST_SECRET"}
    env["SHARD_TEST_VISIBLE"] = "yes"
    out = await run(ctx_for(tmp_path, env=env), 'echo "[${SHARD_TEST_SECRET-unset}] [$SHARD_TEST_VISIBLE]"')
    assert text_of(out) == "[unset] [yes]\n"


async def test_env_none_inherits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ctx.env the command inherits this process's environment."""
    monkeypatch.setenv("SHARD_TEST_INHERITED", "inherited")
    out = await run(ctx_for(tmp_path), "echo $SHARD_TEST_INHERITED")
    assert text_of(out) == "inherited\n"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path, strays: list[int]) -> None:
    """A command over its timeout is killed with everything it started (a backgrounded sleep too); the
    result is an error saying so and keeps the output produced so far."""
    ctx = ctx_for(tmp_path)
    out = await run(ctx, "sleep 1000 & echo $!; echo $$; sleep 1000", limit=0.5)
    child, shell = (int(x) for x in text_of(out).split()[:2])
    strays += [child, shell]
    assert out.is_error
    assert out.exit_code is None
    assert "Timed out after 0.5 s" in text_of(out)
    assert await wait_until(lambda: not alive(child) and not alive(shell))


async def test_timeout_also_kills_children_that_ignore_sigterm(tmp_path: Path, strays: list[int]) -> None:
    """A group that ignores SIGTERM is SIGKILLed after the grace period."""
    ctx = ctx_for(tmp_path)
    out = await run(ctx, "trap '' TERM; sleep 1000 & echo $!; sleep 1000", limit=0.5)
    child = int(text_of(out).split()[0])
    strays.append(child)
    assert out.is_error
    assert await wait_until(lambda: not alive(child))


async def test_cancelling_kills_the_group_and_its_children(tmp_path: Path, strays: list[int]) -> None:
    """Abort cancels the execute task: the shell and its background children are killed, and the
    cancellation propagates."""
    ctx = ctx_for(tmp_path)
    child_file, shell_file = ctx.cwd / "child.pid", ctx.cwd / "shell.pid"
    tool = BashTool()
    command = (
        "sleep 1000 & echo $! > child.tmp && mv child.tmp child.pid; "
        "echo $$ > shell.tmp && mv shell.tmp shell.pid; wait"
    )
    task = asyncio.create_task(tool.execute(tool.parse({"command": command}), ctx))
    assert await wait_until(lambda: child_file.exists() and shell_file.exists())
    child, shell = int(child_file.read_text()), int(shell_file.read_text())
    strays += [child, shell]
    assert alive(child)
    assert alive(shell)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT)
    assert await wait_until(lambda: not alive(child) and not alive(shell))


async def test_background_child_holding_stdout_does_not_hang(tmp_path: Path, strays: list[int]) -> None:
    """`sleep 1000 & echo started` returns once the shell exits, although the child keeps the output
    pipe open; the output so far is there."""
    ctx = ctx_for(tmp_path)
    out = await run(ctx, "sleep 1000 & echo $!; echo started")
    pid_text, started = text_of(out).split()
    strays.append(int(pid_text))
    assert started == "started"
    assert out.exit_code == 0


async def test_large_output_keeps_head_and_tail_and_spills_everything(tmp_path: Path) -> None:
    """More than head+tail bytes: the text keeps the first 20 KB and the last 30 KB with a note naming
    the spill file, which holds the complete output byte for byte."""
    ctx = ctx_for(tmp_path)
    out = await run(ctx, "seq 1 40000")
    full = "".join(f"{i}\n" for i in range(1, 40001)).encode()
    assert len(full) > HEAD_BYTES + TAIL_BYTES
    text = text_of(out)
    spill = ctx.spill_dir / "tc-test.log"  # type: ignore[operator]
    assert spill.read_bytes() == full
    assert text.startswith(full[:HEAD_BYTES].decode())
    assert text.endswith(full[-TAIL_BYTES:].decode())
    omitted = len(full) - HEAD_BYTES - TAIL_BYTES
    assert f"[… {omitted} bytes omitted." in text
    assert str(spill) in text
    assert out.exit_code == 0


async def test_output_at_the_limit_is_kept_whole_without_a_spill(tmp_path: Path) -> None:
    """Exactly head+tail bytes is not truncated and writes no spill file."""
    ctx = ctx_for(tmp_path)
    n = HEAD_BYTES + TAIL_BYTES
    out = await run(ctx, f"head -c {n} /dev/zero | tr '\\0' x")
    assert text_of(out) == "x" * n
    assert not (tmp_path / "spill" / "tc-test.log").exists()


async def test_large_output_without_a_spill_dir_still_truncates(tmp_path: Path) -> None:
    """Without a spill_dir the text is still cut to head and tail (no file is named)."""
    work = tmp_path / "w"
    work.mkdir()
    out = await run(ToolContext(cwd=work), "seq 1 40000")
    text = text_of(out)
    assert "bytes omitted.]" in text
    assert len(text.encode()) < HEAD_BYTES + TAIL_BYTES + 200


def test_describe_shows_command_cwd_and_timeout(tmp_path: Path) -> None:
    """The permission prompt shows the command, where it runs and a custom timeout."""
    tool = BashTool()
    prompt, details = tool.describe(
        tool.parse({"command": "ls -la", "timeout": 5}), ToolContext(cwd=tmp_path)
    )
    assert prompt == "Run this command?"
    assert [(d.label, d.value, d.format) for d in details] == [
        ("command", "ls -la", "command"),
        ("in", str(tmp_path), "path"),
        ("timeout", "5 s", "text"),
    ]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGQUIT, 131)])
def test_commands_get_default_signals_when_shard_ignores_them(tmp_path: Path, sig: signal.Signals, code: int):
    """A Shard started with SIGINT/SIGQUIT ignored (a background job) does not pass the ignore on: a
    program the command runs that gets the signal ends with 128+N. (Bash itself always ignores
    SIGQUIT, so the signal goes to a program it starts.)"""
    import subprocess
    import sys

    suicide = f"import os, time; os.kill(os.getpid(), {int(sig)}); time.sleep(2)"
    child = f"{sys.executable} -c '{suicide}' 2>/dev/null"

    program = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from shard.agent.tools.base import ToolContext\n"
        "from shard.agent.tools.bash import BashTool\n"
        "tool = BashTool()\n"
        f"args = tool.parse({{'command': {child!r}}})\n"
        f"out = asyncio.run(tool.execute(args, ToolContext(cwd=Path({str(tmp_path)!r}))))\n"
        "print(out.exit_code)\n"
    )

    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGQUIT, signal.SIG_IGN)

    done = subprocess.run(
        [sys.executable, "-c", program], preexec_fn=ignore, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == str(code), done.stderr

"""The warm-runtime template (``shard.cli.forkserver``) driven through the daemon's own end
(``shard.daemon.warm_pool.Template``): a forked child gets the environment, working directory and
arguments of its request — not the template's — and its exit status comes back; the template leaves
when the daemon's end closes, and the children it forked live on."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard._python import module_and_args, module_argv
from shard.cli.forkserver import FIRST_BUILDS, QUIET_AFTER_FORK
from shard.daemon.warm_pool import Template
from shard.testing import write_scripted_home
from shard.testing.home import text_step, tool_step
from shard.testing.tools import TEST_TOOLS

pytestmark = pytest.mark.slow


async def _template(env: dict[str, str]) -> Template:
    gone: list[Template] = []
    template = Template((), gone.append)
    await template.start(env, [])
    assert await template.ready(60), "the template came up"
    return template


async def _line(stream: asyncio.StreamReader) -> dict[str, Any]:
    return orjson.loads(await asyncio.wait_for(stream.readline(), 30))


async def test_a_child_gets_its_request_not_the_template(tmp_path: Path, project: Path):
    """The request's env, cwd and arguments, the template's none of them."""
    home = write_scripted_home(
        tmp_path / "home",
        [tool_step("probe", {}), text_step("done")],
        extensions=[*TEST_TOOLS, "shard.testing.tools:ProbeTool"],
    )
    base = {k: v for k, v in os.environ.items() if k != "SHARD_HOME"}
    template = await _template({**base, "ONLY_IN_TEMPLATE": "1"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    argv = module_argv("shard", "agent", "--stdio", "--home", str(home), "--cwd", str(project))
    here = os.getcwd()
    os.chdir(elsewhere)  # the request carries the daemon's cwd of the moment
    try:
        child = await template.fork(argv, {**base, "ONLY_IN_CHILD": "yes"}, None)
    finally:
        os.chdir(here)
    try:
        assert child.stdout is not None
        assert child.stdin is not None
        assert (await _line(child.stdout))["type"] == "hello"
        assert (await _line(child.stdout))["type"] == "sync"
        child.stdin.write(orjson.dumps({"type": "prompt", "id": "p", "message": "probe"}) + b"\n")
        while (event := await _line(child.stdout))["type"] != "tool_result":
            pass
        probe = event["content"]["value"]
        assert probe["env"].get("ONLY_IN_CHILD") == "yes"
        assert "ONLY_IN_TEMPLATE" not in probe["env"]
        assert probe["cwd"] == str(elsewhere.resolve())
        assert probe["argv"] == module_and_args(argv)[1:]
        assert probe["sid"] == probe["pid"] == child.pid
        child.stdin.close()
        assert await asyncio.wait_for(child.wait(), 30) == 0, "a clean exit is reported as 0"
    finally:
        await template.wait_closed()


async def test_exit_status_comes_back_and_the_template_leaves_with_the_daemon(tmp_path: Path):
    """A child's exit status as asyncio reports a spawned one's; a closed control socket ends the
    template, and a child it forked is still running and still reported (by pidfd) when it ends."""
    base = dict(os.environ)
    template = await _template(base)
    usage = await template.fork(module_argv("shard", "agent"), base, None)
    assert await asyncio.wait_for(usage.wait(), 30) == 2, "a usage mistake exits 2"
    assert usage.stderr is not None
    assert b"--stdio" in await usage.stderr.read(), "its stderr is its own pipe"
    home = write_scripted_home(tmp_path / "home", [text_step("x")])
    argv = module_argv("shard", "agent", "--stdio", "--home", str(home), "--cwd", str(tmp_path))
    child = await template.fork(argv, base, None)
    assert child.stdout is not None
    assert child.stdin is not None
    assert (await _line(child.stdout))["type"] == "hello"
    await asyncio.wait_for(template.wait_closed(), 30)
    assert template.proc is not None
    assert template.proc.returncode == 0, "the template left"
    assert not child.finished
    assert Path(f"/proc/{child.pid}").exists(), "its child lives on"
    child.stdin.close()
    assert await asyncio.wait_for(child.wait(), 30) is None, "ended; the status died with the template"
    assert child.finished


def test_the_models_a_first_attach_and_prompt_need_are_built_first():
    """The template's warming builds :data:`FIRST_BUILDS` before any other deferred model, each a
    model still unbuilt after the template's imports (a renamed one would fall silently out of the
    list: here it fails). Run in a fresh interpreter: this one has built models already."""
    probe = textwrap.dedent(
        """
        import importlib
        from shard.cli import forkserver
        from shard.daemon.early_template import TEMPLATE_IMPORTS
        for name in TEMPLATE_IMPORTS:
            importlib.import_module(name)
        import shard.agent.tools.subagents
        models = forkserver._deferred_models()
        print(len(models))
        for model in models[: len(forkserver.FIRST_BUILDS)]:
            print(f"{model.__module__}.{model.__qualname__}")
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    count, *first = ran.stdout.split()
    assert int(count) > len(FIRST_BUILDS)
    assert tuple(first) == FIRST_BUILDS


async def test_the_warming_waits_after_each_fork(capfd: pytest.CaptureFixture[str]):
    """The template's warming serves later runtimes; the one it has just forked, and the daemon,
    are on the path of that runtime's first answer: no warming step starts until
    ``QUIET_AFTER_FORK`` after a fork. (The request is sent before the template is ready, so the
    fork comes before any step.)"""
    env = {**os.environ, "SHARD_TRACE": repr(time.time())}
    gone: list[Template] = []
    template = Template((), gone.append)
    await template.start(env, [])
    try:
        child = await template.fork(module_argv("shard", "--version"), env, None)
        assert await asyncio.wait_for(child.wait(), 60) == 0
        seen = ""
        for _ in range(600):
            seen += capfd.readouterr().err
            if "template: hosted tools" in seen:
                break
            await asyncio.sleep(0.05)
    finally:
        await template.wait_closed()
    marks = {
        label: float(ms)
        for label, ms in re.findall(rf"shard-trace {template.proc.pid} template: ([a-z ]+) \+([0-9.]+)", seen)
    }
    assert "fork" in marks, seen
    assert "hosted tools" in marks, seen
    assert marks["ready"] <= marks["fork"]
    assert marks["hosted tools"] - marks["fork"] >= QUIET_AFTER_FORK * 1000

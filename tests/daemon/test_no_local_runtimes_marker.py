"""The suite's ``no_local_runtimes`` marker (tests/conftest.py): a daemon started by a test so marked skips
the warm template, which would only be forked from — yet an agent it is asked for still runs, spawned
cold. Unmarked tests keep the daemon users run, template and all (test_early_template.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import attach, create_agent, reply_text, runtime_pids
from test_warm_pool import _ppid, templates_of

from shard.testing import DaemonProcess
from shard.testing.home import text_step


@pytest.mark.no_local_runtimes
async def test_a_marked_tests_daemon_has_no_template_and_still_runs_an_agent(
    daemon_factory: Any, project: Path, home: Path
):
    daemon = await daemon_factory([text_step("hello there")])
    assert templates_of(daemon) == []
    client = await daemon.unix()
    agent = await create_agent(client, project)
    await attach(client, agent)
    assert await reply_text(client, agent) == "hello there"
    (pid,) = runtime_pids(home)
    assert _ppid(pid) == daemon.proc.pid  # spawned by the daemon itself: no template forked it


def test_the_marker_holds_only_while_its_test_or_module_runs():
    """The default is restored after a marked scope, and an unmarked inner scope (a test in a marked
    module) leaves the module's choice alone."""
    assert DaemonProcess.cold_by_default is False
    with DaemonProcess.cold_while(True):
        assert DaemonProcess.cold_by_default is True
        with DaemonProcess.cold_while(False):
            assert DaemonProcess.cold_by_default is True
        assert DaemonProcess.cold_by_default is True
    assert DaemonProcess.cold_by_default is False

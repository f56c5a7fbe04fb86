"""``shard daemon``: the warm template first, then everything else (``cli/daemon_serve.py``).

The template's interpreter and imports are the path of a fresh daemon's first answer (issue 31), so
it starts before config.toml is read, before the daemon imports anything of its own — this module
imports nothing heavy — and, run as the ``shard`` command, before even the command line's parser
(``shard.cli.start``): then it is taken here. Its environment is an allowlist (``template_env``):
the keys are still in the daemon's environment then, and none reaches the template.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from shard._home import shard_home
from shard._trace import mark

if TYPE_CHECKING:
    from shard.daemon.early_template import EarlyTemplate


def main_daemon(args: argparse.Namespace) -> int:
    from shard.daemon.early_template import take_started

    home = shard_home(args.home)
    started = take_started(home, cold_start=args.cold_start)  # by ``shard.cli.start``, before the parser
    if started is not None:
        early = started[0]
    elif args.cold_start:
        early = None
    else:
        early = _early_template(home)
    try:
        from shard.cli.daemon_serve import serve

        return serve(args, early)
    finally:
        if early is not None:
            early.close()  # adopted (then its socket is closed already), never used, or not wanted


def _early_template(home: Path) -> EarlyTemplate | None:
    """The warm template, started now: it imports on the other core while the daemon imports its
    own modules, rather than after them (``early_template``)."""
    from shard.daemon.early_template import start_early
    from shard.daemon.template_spawn import key_names, template_env

    mark("daemon: template")
    return start_early(template_env(home), key_names())

"""How Shard starts a Python process of its own: ``python -P -m MODULE ARGS``.

``python -m`` puts the current folder first on ``sys.path``. A process started in a repository — the
daemon ``shard`` starts in the background from the folder it was typed in, the runtime template and
the runtimes the daemon starts from its own folder, an SDK client's ``shard agent --stdio`` in the
agent's folder — imported that repository's ``argparse.py`` or ``json.py`` instead of Python's: a
repository's own files ran as Shard before any gate asked. ``-P`` (Python 3.11) leaves the folder
off the path. Nothing but ``sys``: the template's spawn imports this before anything else.
"""

from __future__ import annotations

import sys

_PREFIX = ("-P", "-m")


def module_argv(module: str, *args: str) -> list[str]:
    """This Python running ``module`` with ``args``, the current folder off its path."""
    return [sys.executable, *_PREFIX, module, *args]


def module_and_args(argv: list[str]) -> list[str]:
    """``[module, *args]`` of what :func:`module_argv` made."""
    return argv[1 + len(_PREFIX) :]

"""The ``shard`` command's first step (the console script and ``python -m shard``, issue 31).

``shard daemon``'s warm template is the path of a fresh daemon's first answer: it imports the
runtime (~250 ms) while the daemon imports its own modules. Started from ``main_daemon`` it began
~60 ms after the command did — after ``shard.cli.main``'s imports (~30 ms: the dataclass machinery,
argparse) and the whole parser (~11 ms). So this module, which imports nothing of its own, reads the
command line as far as it needs (:func:`daemon_home`) and starts it first, with nothing imported but
``os`` (``shard.daemon.template_spawn``: ``subprocess`` and its kin cost another ~25 ms);
``main_daemon`` then takes it once the real parser agrees (the same home, no ``--cold-start``), else
lets it go.
"""

from __future__ import annotations

import sys

# What may come between ``daemon`` and the options read here: any other option argparse takes,
# spelled out in full (an abbreviation of these could be one of them: then nothing starts early).
_READ = ("--home", "--cold-start")
_HELP = ("-h", "--help")


def daemon_home(argv: list[str]) -> tuple[str | None] | None:
    """For ``shard daemon …`` that warm-starts: ``(home,)`` (``home`` None: the default one); None
    for anything else, and whenever the command line is not plain enough to be sure."""
    if not argv or argv[0] != "daemon":
        return None
    home: str | None = None
    rest = argv[1:]
    for i, arg in enumerate(rest):
        name = arg.split("=", 1)[0]
        if name in _HELP or name == "--cold-start":
            return None
        if name != arg and name == "--home":
            home = arg.split("=", 1)[1]
        elif arg == "--home":
            if i + 1 >= len(rest):
                return None
            home = rest[i + 1]
        elif arg.startswith("--") and any(full.startswith(name) and full != name for full in _READ):
            return None  # "--ho", "--cold": argparse's abbreviations
    return (home,)


def entry() -> None:
    from shard import _kept_imports

    _kept_imports.install()  # before anything else is imported: every module after it is found there
    found = daemon_home(sys.argv[1:])
    if found is not None:
        from shard.daemon.template_spawn import start_for_home

        start_for_home(found[0])
    from shard.cli.main import entry as run

    run()

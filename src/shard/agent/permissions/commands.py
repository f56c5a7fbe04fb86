"""What decides the code a command runs — as data: the rows that shape ``bash_signature`` grants.

A signature is ``(executable, sorted flags)`` with every other argument free. For most programs that
is a fair reading of "commands like this one". It is not for programs whose arguments choose the code
that runs: an interpreter's script or module, a launcher's command, a package runner's package, a
build tool's makefile, an awk or sed program. Each of those has a row below saying what is *pinned*
into the executable part of the signature, which flags make a signature impossible (the call can then
only be allowed exactly), or that no signature is ever offered. Every row has a test
(``tests/agent/permissions/test_command_rows.py``) that a grant for one use does not cover another.

:func:`~shard.agent.permissions.shape.shape` reads one simple command with these rows. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Row:
    why: str
    exact_only: bool = False  # never a signature
    subcommand: bool = False  # the first argument selects what runs (git status); options before it refuse
    pin: int = 0  # leading operands pinned into the executable (script, module, program, target)
    pin_all: bool = False  # every operand pinned (what gets installed or built)
    pin_optional: bool = False  # fewer operands than ``pin`` is fine (make with no target)
    stop_at_pin: bool = False  # options after the pinned script are the script's own (python x.py -c)
    command_after: bool = False  # after the pins, the rest is a command of its own, shaped by these rows
    command_flags: frozenset[str] = frozenset()  # a flag after which the rest is a command (python -m MOD)
    value_flags: frozenset[str] = frozenset()  # flags whose value is pinned (awk -F x, sed -e S)
    value_flags_pin: bool = False  # a pinned value flag stands for the pinned operand (sed -e S file)
    refuse: frozenset[str] = frozenset()  # flags that make a signature impossible ("-x*": a prefix)
    before: frozenset[str] = frozenset()  # flags allowed before the pins; any other there refuses
    no_assignments: bool = False  # an operand NAME=value refuses (make CC=./evil)
    subs: dict[str, Row] = field(default_factory=dict)  # rows of subcommands ("git rebase")


def _set(*items: str) -> frozenset[str]:
    return frozenset(items)


PLAIN = Row("an ordinary program: its flags are part of the signature, other arguments free")
_LAUNCH = "runs the command given in its arguments: a signature would allow any command"
_EDITOR = "an editor or pager that runs commands given as arguments"
_INSTALL = Row("installs or builds what its arguments name: every one of them is pinned", pin_all=True)


def _interpreter(why: str, refuse: frozenset[str], before: frozenset[str] = frozenset(), **kw: object) -> Row:
    return Row(why, pin=1, stop_at_pin=True, refuse=refuse, before=before, **kw)  # type: ignore[arg-type]


_SHELL = _interpreter(
    "a shell: the script is pinned; -c (inline code) and rc files refuse",
    _set("-c", "-i", "-s", "--rcfile", "--init-file", "-O", "-o", "--debugger"),
    _set("-e", "-u", "-x", "-v", "-n", "-l", "-f", "--login", "--norc", "--noprofile", "--posix"),
)
_PYTHON = _interpreter(
    "the script, or the module after -m (shaped again as a command), is pinned; -c refuses",
    _set("-c", "--command"),
    _set("-u", "-B", "-O", "-OO", "-q", "-s", "-S", "-E", "-I", "-b", "-bb", "-v", "-P"),
    command_flags=_set("-m"),
)
_NODE = _interpreter(
    "the script is pinned; inline code, preloaded modules and the inspector refuse",
    _set(
        "-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader",
        "--experimental-loader", "--inspect*", "-i", "--interactive", "--env-file*",
    ),
    _set("--no-warnings", "--enable-source-maps", "--trace-warnings", "--no-deprecation", "--test"),
)  # fmt: skip
_AWK = Row(
    "the program is pinned (with -F/-v values); program files and extensions refuse",
    pin=1,
    value_flags=_set("-F", "-v"),
    refuse=_set("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"),
)
_SED = Row(
    "the script (or each -e script) is pinned; script files refuse",
    pin=1,
    value_flags=_set("-e", "--expression"),
    value_flags_pin=True,
    refuse=_set("-f", "--file"),
    before=_set(
        "-n", "-E", "-r", "-s", "-u", "-z", "-i*", "--in-place*", "--quiet", "--silent", "--posix",
        "--regexp-extended", "--null-data", "--separate", "--debug", "--sandbox",
    ),
)  # fmt: skip
_JQ = Row(
    "the filter is pinned; filter files refuse",
    pin=1,
    refuse=_set("-f", "--from-file", "-L"),
    before=_set(
        "-r", "-c", "-e", "-n", "-s", "-S", "-j", "-a", "-C", "-M", "-R", "--raw-output",
        "--compact-output", "--slurp", "--sort-keys", "--tab", "--exit-status", "--null-input",
        "--join-output", "--ascii-output", "--raw-input",
    ),
)  # fmt: skip
_RUN_SCRIPT = Row("runs the named package script: its name is pinned", pin=1)
_RUN_COMMAND = Row(
    "runs the command that follows: it is shaped again, with these rows",
    command_after=True,
    before=_set("-y", "--yes", "-q", "--quiet", "--frozen", "--locked", "--no-sync", "--offline"),
)
_GO_TOOLS = _set("-exec", "-toolexec", "-vettool", "-overlay")
_GIT_CODE = "runs programs from its arguments or changes what later git commands run"
_INSTALLS = {"install": _INSTALL}
_GIT_FETCH = _set("-u", "--upload-pack*", "--exec*", "-c", "--config*", "--template*")

ROWS: dict[str, Row] = {
    # interpreters: the script (or module) decides what runs
    "python": _PYTHON,
    "pypy": _PYTHON,
    "node": _NODE,
    "ruby": _interpreter(
        "the script is pinned; inline code, required libraries and load paths refuse",
        _set("-e", "-r", "-I", "-x", "-C", "-S"),
        _set("-w", "-W", "-v", "-d"),
    ),
    "perl": _interpreter(
        "the script is pinned; inline code, modules (-M) and include paths refuse",
        _set("-e", "-E", "-M", "-m", "-I", "-x", "-d", "-i"),
        _set("-w", "-W", "-T", "-t", "-l", "-n", "-p", "-a", "-s"),
    ),
    "php": _interpreter(
        "the script is pinned; inline code and ini overrides refuse",
        _set("-r", "-a", "-d", "-c", "-B", "-R", "-F", "-E", "-z", "-S", "-t"),
        _set("-n", "-q"),
    ),
    "lua": _interpreter("the script is pinned; inline code and libraries refuse", _set("-e", "-l", "-i")),
    "Rscript": _interpreter("the script is pinned; inline code refuses", _set("-e", "--default-packages*")),
    "osascript": _interpreter("the script is pinned; inline code refuses", _set("-e", "-l", "-i")),
    "tclsh": _interpreter("the script is pinned; inline code refuses", _set("-c", "-e", "-i")),
    "expect": _interpreter("the script is pinned; inline code refuses", _set("-c", "-i", "-f")),
    "sh": _SHELL,
    "bash": _SHELL,
    "zsh": _SHELL,
    "dash": _SHELL,
    "ksh": _SHELL,
    "fish": _SHELL,
    "R": Row("R runs code from its options and stdin", exact_only=True),
    "pwsh": Row("PowerShell takes code in many option spellings", exact_only=True),
    # Python modules run with -m (and their commands): those that run a script or code given to them
    **{
        name: Row("runs the script it is given: the script is pinned", pin=1, stop_at_pin=True)
        for name in ("cProfile", "profile", "pdb", "trace", "doctest")
    },
    **{
        name: Row("runs the code given in its arguments", exact_only=True)
        for name in ("runpy", "timeit", "code", "idlelib")
    },
    **{
        name: Row("runs the test files it is given: they are pinned", pin_all=True, pin_optional=True)
        for name in ("pytest", "py.test", "unittest")
    },
    # launchers: the command they start is in their arguments
    **{
        name: Row(_LAUNCH, exact_only=True)
        for name in (
            "env",
            "sudo",
            "doas",
            "su",
            "runuser",
            "pkexec",
            "xargs",
            "parallel",
            "nohup",
            "timeout",
            "nice",
            "ionice",
            "stdbuf",
            "setsid",
            "command",
            "builtin",
            "watch",
            "flock",
            "strace",
            "ltrace",
            "chroot",
            "unshare",
            "nsenter",
            "script",
            "busybox",
            "ssh",
            "gdb",
            "lldb",
            "valgrind",
            "taskset",
            "chrt",
            "systemd-run",
            "firejail",
            "bwrap",
            "prlimit",
            "entr",
            "nodemon",
            "xdg-open",
            "open",
            "exec",
            "eval",
            "source",
            ".",
            "trap",
        )
    },
    # builtins that change how later commands on the line resolve (PATH, aliases, functions)
    **{
        name: Row("changes the environment later commands run in", exact_only=True)
        for name in ("export", "declare", "typeset", "local", "readonly", "alias", "hash", "enable", "shopt")
    },
    **{name: Row(_EDITOR, exact_only=True) for name in ("vi", "vim", "nvim", "ex", "emacs", "man")},
    **{
        name: Row("a database shell: its input can run commands", exact_only=True)
        for name in ("sqlite3", "psql", "mysql")
    },
    # programs whose arguments are programs
    "awk": _AWK,
    "gawk": _AWK,
    "mawk": _AWK,
    "nawk": _AWK,
    "sed": _SED,
    "gsed": _SED,
    "jq": _JQ,
    "find": Row(
        "runs commands or deletes with -exec/-ok/-delete, writes files with -fprint/-fls",
        refuse=_set(
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"
        ),
    ),
    "make": Row(
        "the targets are pinned; another makefile, directory or variable override refuses",
        pin_all=True,
        pin_optional=True,
        no_assignments=True,
        refuse=_set(
            "-f",
            "--file*",
            "--makefile*",
            "-C",
            "--directory*",
            "-I",
            "--include-dir*",
            "-E",
            "--eval*",
            "-e",
            "--environment-overrides",
        ),
    ),
    "tar": Row(
        "runs programs through its compression and checkpoint options",
        refuse=_set(
            "--to-command*",
            "-I",
            "--use-compress-program*",
            "--checkpoint-action*",
            "--info-script*",
            "-F",
            "--new-volume-script*",
            "--rsh-command*",
        ),
    ),
    "zip": Row("runs a program to test the archive", refuse=_set("-TT", "--unzip-command*")),
    "rsync": Row("runs a remote shell it is given", refuse=_set("-e", "--rsh*", "--rsync-path*")),
    "scp": Row("runs a program it is given as its ssh", refuse=_set("-S", "-o", "-F")),
    # tools whose first argument is a subcommand; some subcommands run code named in their arguments
    "git": Row(
        "the subcommand is pinned; subcommands and options that run configured or given programs refuse",
        subcommand=True,
        subs={
            **{
                sub: Row(_GIT_CODE, exact_only=True)
                for sub in (
                    "config",
                    "submodule",
                    "bisect",
                    "filter-branch",
                    "hook",
                    "daemon",
                    "difftool",
                    "mergetool",
                    "credential",
                    "upload-pack",
                    "receive-pack",
                    "shell",
                    "instaweb",
                    "send-email",
                    "-c",
                )
            },
            "rebase": Row(
                "runs the commands given to --exec", refuse=_set("-x", "--exec*", "-i", "--interactive")
            ),
            "clone": Row("runs the program given as --upload-pack", refuse=_GIT_FETCH),
            "fetch": Row("runs the program given as --upload-pack", refuse=_GIT_FETCH),
            "pull": Row("runs the program given as --upload-pack", refuse=_GIT_FETCH),
            "ls-remote": Row("runs the program given as --upload-pack", refuse=_GIT_FETCH),
            "archive": Row("runs the program given as --exec", refuse=_GIT_FETCH),
            "push": Row(
                "runs the program given as --receive-pack", refuse=_set("--receive-pack*", "--exec*")
            ),
            "grep": Row("runs the pager given to -O", refuse=_set("-O*", "--open-files-in-pager*")),
        },
    ),
    **{
        name: Row(
            "the subcommand is pinned; run/exec pin the script or shape the command they start",
            subcommand=True,
            subs={
                "run": _RUN_SCRIPT,
                "run-script": _RUN_SCRIPT,
                "exec": _RUN_COMMAND,
                "x": _RUN_COMMAND,
                "dlx": _RUN_COMMAND,
                "install": _INSTALL,
                "i": _INSTALL,
                "add": _INSTALL,
            },
        )
        for name in ("npm", "pnpm", "yarn", "bun")
    },
    **{name: _RUN_COMMAND for name in ("npx", "bunx", "pnpx", "uvx")},
    "uv": Row(
        "the subcommand is pinned; uv run shapes the command it starts",
        subcommand=True,
        subs={
            "run": _RUN_COMMAND,
            "add": _INSTALL,
            "tool": Row("installs and runs tools named in its arguments", exact_only=True),
            "pip": Row("installs the packages named in its arguments", exact_only=True),
        },
    ),
    **{
        name: Row(
            "the subcommand is pinned; run shapes the command it starts, install/add pin the packages",
            subcommand=True,
            subs={"run": _RUN_COMMAND, "install": _INSTALL, "add": _INSTALL},
        )
        for name in ("pipx", "poetry", "pdm", "hatch")
    },
    **{
        name: Row("the subcommand is pinned; install pins the packages", subcommand=True, subs=_INSTALLS)
        for name in ("pip", "pip3", "gem", "brew", "apt", "apt-get")
    },
    "conda": Row(
        "the subcommand is pinned; conda run takes options before its command",
        subcommand=True,
        subs={"run": Row(_LAUNCH, exact_only=True), "install": _INSTALL},
    ),
    "cargo": Row(
        "the subcommand is pinned; install pins the crates",
        subcommand=True,
        subs={"install": _INSTALL},
    ),
    "go": Row(
        "the subcommand is pinned; go run pins the package; -exec/-toolexec refuse",
        subcommand=True,
        subs={
            "run": Row("the package or file is pinned", pin=1, stop_at_pin=True, refuse=_GO_TOOLS),
            "install": Row(_INSTALL.why, pin_all=True, refuse=_GO_TOOLS),
            "get": _INSTALL,
            "test": Row("runs programs given to -exec", refuse=_GO_TOOLS),
            "build": Row("runs programs given to -toolexec", refuse=_GO_TOOLS),
            "vet": Row("runs the program given to -vettool", refuse=_GO_TOOLS),
            "generate": Row("runs the commands its flags select", refuse=_set("-run*", "-skip*", *_GO_TOOLS)),
        },
    ),
    "deno": Row(
        "the subcommand is pinned; deno run pins the script, eval and repl refuse",
        subcommand=True,
        subs={
            "run": Row(
                "the script is pinned",
                pin=1,
                stop_at_pin=True,
                refuse=_set("--import-map*", "--config*", "-c", "--preload*"),
                before=_set("-A", "--allow-*", "--deny-*", "-q", "--quiet", "--no-prompt", "--unstable*"),
            ),
            "task": _RUN_SCRIPT,
            "eval": Row("runs the code given as its argument", exact_only=True),
            "repl": Row("runs code given with --eval", exact_only=True),
            "install": _INSTALL,
            "add": _INSTALL,
        },
    ),
    **{
        name: Row(
            "the subcommand is pinned; run/exec start containers running any command",
            subcommand=True,
            subs={s: Row(_LAUNCH, exact_only=True) for s in ("run", "exec", "create")},
        )
        for name in ("docker", "podman")
    },
    "kubectl": Row(
        "the subcommand is pinned; exec/run/debug/attach/cp run commands in the cluster",
        subcommand=True,
        subs={s: Row(_LAUNCH, exact_only=True) for s in ("exec", "run", "debug", "attach", "cp")},
    ),
    **{
        name: Row("the subcommand is pinned", subcommand=True)
        for name in ("gh", "systemctl", "dotnet", "mvn", "gradle", "terraform", "helm", "rustup")
    },
}

_VERSIONED = re.compile(r"(python|pypy|ruby|perl|php|lua|node)(js)?[0-9.]*")


def row_for(executable: str) -> Row:
    base = executable.rsplit("/", 1)[-1]
    row = ROWS.get(base)
    if row is None and (m := _VERSIONED.fullmatch(base)):
        row = ROWS.get(m.group(1))
    return row or PLAIN

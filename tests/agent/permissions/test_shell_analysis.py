"""shell.analyze: which simple commands a bash command line runs, or None when that is not certain.

The table pins every construct the analyser must see through (pipes, lists, subshells, command and
process substitution, quoting, comments, continuations, harmless redirections) and every construct it
must refuse (output redirection to files, NAME=value prefixes, control keywords, eval/exec/source,
here-documents, options before a subcommand, unbalanced quotes). Signatures are compared as a sorted
multiset: the order in which they are reported carries no meaning for grants.
"""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.agent.permissions.commands import PLAIN, row_for
from shard.agent.permissions.shell import Signature, analyze

Sig = tuple[str, tuple[str, ...]]


def sigs(command: str) -> list[Sig] | None:
    found = analyze(command)
    if found is None:
        return None
    assert all(isinstance(s, Signature) for s in found)
    return sorted((s.executable, s.flags) for s in found)


def exp(*items: str | Sig) -> list[Sig]:
    """Expected signatures: a bare string is an executable without flags."""
    return sorted((i, ()) if isinstance(i, str) else i for i in items)


ANALYSED: list[tuple[str, list[Sig]]] = [
    # plain commands and flags
    ("ls", exp("ls")),
    ("ls -la", exp(("ls", ("-la",)))),
    ("ls -l -a", exp(("ls", ("-a", "-l")))),
    ("ls -b -a -b", exp(("ls", ("-a", "-b")))),
    ("ls -- -x", exp("ls")),
    ("ls - file", exp("ls")),
    ("grep --color=never -n x f", exp(("grep", ("--color=never", "-n")))),
    ("./git status", exp("./git status")),  # as typed: not what a grant for `git status` names
    ("/usr/bin/git status", exp("/usr/bin/git status")),
    ("r''m -rf x", exp(("rm", ("-rf",)))),
    ("\\rm x", exp("rm")),
    ("echo if then fi", exp("echo")),
    # subcommand tools
    ("git", exp("git")),
    ("git status", exp("git status")),
    ("git status --short", exp(("git status", ("--short",)))),
    ("git status -s --porcelain", exp(("git status", ("--porcelain", "-s")))),
    ("make test", exp("make test")),
    ("npm install -g x", exp(("npm install x", ("-g",)))),  # what gets installed is pinned
    # lists and pipelines
    ("git status; rm -rf x", exp("git status", ("rm", ("-rf",)))),
    ("a | b && c || d & e", exp("a", "b", "c", "d", "e")),
    ("ls -la|grep foo", exp(("ls", ("-la",)), "grep")),
    ("ls |& grep x", exp("ls", "grep")),
    ("ls&&rm x", exp("ls", "rm")),
    ("ls\nrm x", exp("ls", "rm")),
    ("ls &", exp("ls")),
    # subshells
    ("(cd x && ls -l)", exp("cd", ("ls", ("-l",)))),
    ("(ls; (rm x)) | wc", exp("ls", "rm", "wc")),
    # command substitution, also inside double and single quotes
    ('echo "$(rm x)"', exp("rm", "echo")),
    ("echo '$(rm x)'", exp("rm", "echo")),
    ("echo $(echo $(rm y))", exp("rm", "echo", "echo")),
    ("echo `whoami`", exp("whoami", "echo")),
    ('echo "`rm z`"', exp("rm", "echo")),
    ("echo '`rm z`'", exp("rm", "echo")),
    ('echo "$(echo ")")"; rm x', exp("echo", "echo", "rm")),
    ("ls ${DIR:-$(rm x)}", exp("rm", "ls")),
    # process substitution
    ("diff <(ls a) <(sort b)", exp("ls", "sort", "diff")),
    ("tee >(grep x) < f", exp("grep", "tee")),
    ("cat<(rm x)", exp("rm", "cat")),
    # redirections that write nothing anywhere
    ("ls 2>&1", exp("ls")),
    ("ls >/dev/null", exp("ls")),
    ("ls > /dev/null 2>&1", exp("ls")),
    ("ls &>/dev/null", exp("ls")),
    ("ls 2>/dev/null", exp("ls")),
    ("ls >>/dev/null", exp("ls")),
    ("ls >&2", exp("ls")),
    ("ls 1>&2", exp("ls")),
    ("cmd 3>&1 1>&2 2>&3", exp("cmd")),
    ("ls >&-", exp("ls")),
    ("cat < in.txt", exp("cat")),
    ('cat <<< "x"', exp("cat")),
    (">/dev/null ls", exp("ls")),
    # comments
    ("ls # rm -rf /", exp("ls")),
    ("ls #; rm x", exp("ls")),
    ("ls;#x\npwd", exp("ls", "pwd")),
    ("echo a#b", exp("echo")),
    ("echo a #\nrm x", exp("echo", "rm")),
    ("# only a comment\nls", exp("ls")),
    # line continuations
    ("ls \\\n  -la", exp(("ls", ("-la",)))),
    ("r\\\nm x", exp("rm")),
    ("git status \\\n && rm x", exp("git status", "rm")),
    # quoting and escapes
    ('echo "a \\" ; rm x"', exp("echo")),
    ("echo a\\;rm", exp("echo")),
    ("echo 'a ; rm' \"b | c\"", exp("echo")),
    ("echo \\'; rm x", exp("echo", "rm")),
    ('echo \\"; rm x', exp("echo", "rm")),
    ('echo "it\'s" && ls', exp("echo", "ls")),
    # arithmetic expansion is not a command
    ("echo $((1+2))", exp("echo")),
    ('echo "$((1+2))"', exp("echo")),
]

REFUSED: list[str] = [
    # output redirection to a file
    "ls > out.txt",
    "ls >out.txt",
    "ls >> log",
    "ls 2> err",
    "ls &> out",
    "ls &>> out",
    "echo hi >| f",
    "cat <> f",
    "ls >&file",
    "ls > /dev/null > out",
    "git status > f",
    "ls | tee x > y",
    # environment prefixes
    "FOO=1 cmd",
    "PATH=/x git status",
    "x=1",
    "ls; FOO=1 cmd",
    ">/dev/null FOO=1 cmd",
    # options before a subcommand
    "git -C dir push",
    "npm -g install x",
    "git --no-pager log",
    # here-documents
    "cat <<EOF\nrm x\nEOF",
    "cat <<-EOF\n\trm x\nEOF",
    "cat <<'EOF'\nx\nEOF",
    "echo $(cat <<EOF\nx\nEOF\n)",
    # control keywords and grouping
    "if true; then ls; fi",
    "for f in *; do rm $f; done",
    "while true; do ls; done",
    "until false; do ls; done",
    "case x in y) ls;; esac",
    "function f { ls; }",
    "{ ls; }",
    "time ls",
    "! ls",
    "[[ -f x ]] && ls",
    "ls; then",
    "select x in a; do ls; done",
    "coproc ls",
    # opaque commands
    "eval ls",
    "exec ls",
    "source x",
    ". x",
    "ls && eval rm",
    "echo $(eval rm x)",
    # unbalanced quoting or substitution
    'echo "unterminated',
    "echo 'x",
    "echo `x",
    "echo $(ls",
    "diff <(ls a",
    "echo \\",
    # nothing to run
    "",
    "   ",
    "# just a comment",
]


@pytest.mark.parametrize(("command", "expected"), ANALYSED, ids=[repr(c) for c, _ in ANALYSED])
def test_analysed_commands_give_every_simple_command(command: str, expected: list[Sig]) -> None:
    """Covers: R9.5.16. Every simple command — in lists, pipelines, subshells, $(…), `…`, <(…), and
    inside quotes — yields (executable, sorted flags); harmless redirections, comments, continuations
    and quoting do not hide or invent commands."""
    assert sigs(command) == expected


@pytest.mark.parametrize("command", REFUSED, ids=[repr(c) for c in REFUSED])
def test_uncertain_commands_are_refused(command: str) -> None:
    """Whenever what runs (or what it may overwrite) cannot be known, analyze returns None, so no
    bash_signature grant can ever match the command."""
    assert analyze(command) is None


def test_signature_describe_joins_executable_and_flags() -> None:
    """describe() is what the 'always allow commands like …' label shows: executable then flags."""
    assert Signature("git status", ("--short", "-b")).describe() == "git status --short -b"
    assert Signature("ls", ()).describe() == "ls"


def test_commands_hidden_in_arithmetic_expansion_are_found() -> None:
    """bash runs command substitutions inside $(( … )) (and backticks there); the analyser must see
    them or refuse — reporting only `echo` would let an `echo` grant run `rm`."""
    for command in ("echo $(( $(rm x) + 1 ))", 'echo "$(( `rm x` + 1 ))"', "echo $((`rm x`))"):
        found = sigs(command)
        assert found is None or ("rm", ()) in found, (command, found)


def test_ansi_c_quoting_does_not_hide_a_command() -> None:
    """In $'…' a backslash escapes a single quote, so bash runs `echo "a'b"; rm x` for the line below
    (checked with real bash). The analyser must report rm or refuse — not a lone `echo`."""
    command = "echo $'a\\'b' ; rm x #'"
    run = subprocess.run(["bash", "-n", "-c", command], capture_output=True, check=False)
    assert run.returncode == 0  # it is a valid bash command
    found = sigs(command)
    assert found is None or ("rm", ()) in found, found


@pytest.mark.parametrize("command", ["(ls", "ls)"])
def test_unbalanced_parentheses_are_refused(command: str) -> None:
    """The module documents that unbalanced parentheses refuse (like unbalanced quotes)."""
    assert analyze(command) is None


# --- properties --------------------------------------------------------------------------------

_SHELLISH = st.text(alphabet=st.sampled_from(list("$()`'\"\\|&;<> \t\n#{}=!-abcx0129/*")), max_size=40)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(st.text(max_size=80), _SHELLISH))
def test_analyze_never_raises(text: str) -> None:
    """analyze is total: any text gives a list of signatures or None, never an exception."""
    result = analyze(text)
    assert result is None or (result and all(isinstance(s, Signature) for s in result))


_WORDS = ["ls", "cat", "grep", "wc", "sort", "head", "echo", "pwd", "uniq", "foo", "bar-baz", "x_1", "tr"]
_ARGS = [
    "-l",
    "-a",
    "--all",
    "-n5",
    "file",
    "x.txt",
    "a/b",
    "-",
    "'q w'",
    '"d q"',
    "'a;b'",
    '"c|d"',
    "e\\;f",
    "2>/dev/null",
    ">/dev/null",
    "2>&1",
    "'$HOME'",
    "x#y",
]
_OPERATORS = ["|", "||", "&&", ";", "&", "\n", "|&", " ; ", " && ", "|"]

assert all(row_for(w) is PLAIN for w in _WORDS)


@st.composite
def _pipelines(draw: st.DrawFn) -> tuple[str, list[Sig]]:
    n = draw(st.integers(min_value=1, max_value=6))
    parts: list[str] = []
    expected: list[Sig] = []
    for i in range(n):
        word = draw(st.sampled_from(_WORDS))
        args = draw(st.lists(st.sampled_from(_ARGS), max_size=4))
        flags = tuple(sorted({a for a in args if a.startswith("-") and a != "-"}))
        expected.append((word, flags))
        if i:
            parts.append(draw(st.sampled_from(_OPERATORS)))
        parts.append(" ".join([word, *args]))
    tail = draw(st.sampled_from(["", ";", " &", "\n", " # trailing comment"]))
    return " ".join(parts) + tail, expected


@settings(max_examples=300, deadline=None)
@given(case=_pipelines())
def test_words_at_command_positions_are_the_executables(case: tuple[str, list[Sig]]) -> None:
    """For commands built from safe words joined by random operators, the signatures found are exactly
    the words at command positions, in order, with their flags."""
    command, expected = case
    found = analyze(command)
    assert found is not None, command
    assert [(s.executable, s.flags) for s in found] == expected, command


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'ls'",
        "sh -c ls",
        "xargs rm < files.txt",
        "env ls",
        "sudo ls",
        "timeout 5 ls",
        "nohup ./server",
        "find . -name '*.py' -exec rm {} +",
        "find . -delete",
        "awk '{print $1}' data.txt",
        "sed -f script.sed file",
        "python -c 'print(1)'",
        "python3 -c print",
        "node -e 'require(\"fs\")'",
        "perl -e 1",
        "ls | xargs cat",
        "/usr/bin/env ls",
    ],
)
def test_programs_that_run_other_programs_are_refused(command):
    """A program that runs other programs or code from its arguments cannot be granted by
    signature: the grant would allow anything (bash -c 'ls' then bash -c 'rm -rf ~').

    Covers: R9.5.17, R9.5.15
    """
    assert analyze(command) is None


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python script.py --verbose", [("python script.py", ("--verbose",))]),
        ("node build.js", [("node build.js", ())]),
        ("sed 's/a/b/' file", [("sed s/a/b/", ())]),
        ("find . -name '*.py'", [("find", ("-name",))]),
    ],
)
def test_interpreters_running_a_file_are_analysed(command, expected):
    """An interpreter running a script file (no inline code) has a signature that pins the script;
    sed pins its script; find without -exec/-delete is an ordinary program."""
    assert [(s.executable, s.flags) for s in analyze(command)] == expected

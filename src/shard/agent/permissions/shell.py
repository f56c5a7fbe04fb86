"""What a shell command runs, for ``bash_signature`` grants (PROTOCOL §9.5) — pure, no I/O.

:func:`analyze` tokenizes a command line the way bash would split it far enough to answer one
question: which executables does it run, with which flags? Every simple command counts — each side
of ``|``, ``;``, ``&&``, ``||``, ``&``, inside ``( … )``, and inside ``$( … )``, ``<( … )`` and
backticks, wherever they appear (even inside quotes: analysing more than bash would run is the safe
direction). The answer is a list of :class:`Signature` ``(executable, sorted flags)``.

It refuses (returns ``None``) — so no grant can ever match — whenever it cannot be sure what runs:
unbalanced quotes or parentheses, control keywords (``if``, ``for``, ``while``, ``case``, functions),
leading ``NAME=value`` assignments (``PATH=…`` changes which binary runs), here-documents, output
redirection to anything but ``/dev/null`` or another descriptor (a grant for ``git status`` must not
become a licence to overwrite files). Substitutions are analysed wherever bash would run them —
inside double quotes, ``$'…'`` quoting and arithmetic expansion included.

What each simple command's signature pins is decided by the table in :mod:`commands`: ordinarily the
command word as typed (``./git`` is not ``git``) and its flags, kept as written and sorted, with every
other argument free; for programs whose arguments decide what code runs — interpreters, launchers,
package runners, awk/sed, make, git's code-running subcommands — the script, module, program or
subcommand is pinned into the executable, or no signature is offered at all. The free arguments, and
files read by ``<`` redirection, are returned too (:func:`analyze_commands`): a grant covers them
only inside the working directory.
"""

from __future__ import annotations

from typing import NamedTuple

from shard.agent.permissions.shape import Refuse, shape

_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
     "function", "select", "time", "coproc", "!", "{", "}", "[[", "]]"}
)  # fmt: skip
_CONTROL = frozenset({"|", "||", "&", "&&", ";", ";;", "\n", "(", ")", "|&"})
_REDIRECTS = (">>", ">|", "&>>", "&>", "<<<", "<<", "<>", ">&", "<&", ">", "<")
_SAFE_TARGETS = frozenset({"/dev/null"})
_Refuse = Refuse


class Signature(NamedTuple):
    executable: str
    flags: tuple[str, ...]  # sorted

    def describe(self) -> str:
        return " ".join((self.executable, *self.flags))


class SimpleCommand(NamedTuple):
    signature: Signature
    free: tuple[str, ...]  # the arguments the signature leaves open, and files read by redirection


def analyze(command: str) -> list[Signature] | None:
    """Every simple command ``command`` runs, or None when that cannot be known for sure."""
    found = analyze_commands(command)
    return None if found is None else [c.signature for c in found]


def analyze_commands(command: str) -> list[SimpleCommand] | None:
    """Like :func:`analyze`, with each command's free arguments (for the working-directory check)."""
    try:
        commands: list[SimpleCommand] = []
        _analyze(command, commands, depth=0)
    except Refuse:
        return None
    return commands if commands else None


def _analyze(command: str, out: list[SimpleCommand], depth: int) -> None:
    if depth > 8:
        raise _Refuse
    tokens, inner = _tokenize(command)
    for sub in inner:
        _analyze(sub, out, depth + 1)
    depth = 0
    for text, is_op in tokens:
        if is_op and text == "(":
            depth += 1
        elif is_op and text == ")":
            depth -= 1
            if depth < 0:
                raise _Refuse
    if depth:
        raise _Refuse
    words: list[tuple[str, bool]] = []  # (text, is_operator)
    for tok in tokens:
        if tok[1] and tok[0] in _CONTROL:
            _simple(words, out)
            words = []
        else:
            words.append(tok)
    _simple(words, out)


def _simple(words: list[tuple[str, bool]], out: list[SimpleCommand]) -> None:
    """One simple command: [assignments] [redirections] word [args and redirections]."""
    args: list[str] = []
    reads: list[str] = []
    i = 0
    while i < len(words):
        text, is_op = words[i]
        if is_op:  # a redirection operator: look at its target
            if text.startswith("<<") and text != "<<<":
                raise _Refuse  # here-document: its body is not analysed
            target = words[i + 1][0] if i + 1 < len(words) and not words[i + 1][1] else None
            if target is None:
                raise _Refuse
            writes = ">" in text
            duplicates = text in (">&", "<&") and (target.isdigit() or target == "-")
            if writes and not duplicates and target not in _SAFE_TARGETS:
                raise _Refuse
            if not writes and not duplicates and text != "<<<":
                reads.append(target)  # a file read by redirection is an argument like any other
            i += 2
            continue
        if not args and "=" in text and text.split("=", 1)[0].isidentifier():
            raise _Refuse  # NAME=value prefix: the environment (PATH…) of what runs changes
        args.append(text)
        i += 1
    if not args:
        return
    exe = args[0]
    if exe in _KEYWORDS or exe.startswith("{") or not exe:
        raise _Refuse
    found = shape(args)
    signature = Signature(found.executable, tuple(sorted(set(found.flags))))
    out.append(SimpleCommand(signature, (*found.free, *reads)))


def _tokenize(command: str) -> tuple[list[tuple[str, bool]], list[str]]:
    """Split into (word, False) / (operator, True) tokens; collect command substitutions' bodies."""
    tokens: list[tuple[str, bool]] = []
    inner: list[str] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(command)

    def end_word() -> None:
        nonlocal in_word
        if in_word:
            tokens.append(("".join(word), False))
            word.clear()
            in_word = False

    while i < n:
        c = command[i]
        if c == "\\":
            if i + 1 < n and command[i + 1] == "\n":
                i += 2
                continue
            if i + 1 >= n:
                raise _Refuse
            word.append(command[i + 1])
            in_word = True
            i += 2
        elif c == "'":
            close = command.find("'", i + 1)
            if close < 0:
                raise _Refuse
            body = command[i + 1 : close]
            inner.extend(_substitutions(body))  # not run by bash, but analysing it is the safe side
            word.append(body)
            in_word = True
            i = close + 1
        elif c == '"':
            i = _double_quoted(command, i + 1, word, inner)
            in_word = True
        elif c == "`":
            close = command.find("`", i + 1)
            if close < 0:
                raise _Refuse
            inner.append(command[i + 1 : close])
            word.append("`sub`")
            in_word = True
            i = close + 1
        elif c == "$" and i + 1 < n and command[i + 1] == "'":
            i = _ansi_c_quoted(command, i + 2, word)
            in_word = True
        elif c == "$" and i + 1 < n and command[i + 1] == "(":
            body, i = _balanced(command, i + 2)
            if body.startswith("("):  # $(( arithmetic )): bash still runs the substitutions inside
                inner.extend(_substitutions(body))
                word.append("$((…))")
            else:
                inner.append(body)
                word.append("$(…)")
            in_word = True
        elif c in "<>" and i + 1 < n and command[i + 1] == "(":  # process substitution
            end_word()
            body, i = _balanced(command, i + 2)
            inner.append(body)
            tokens.append(("<(…)", False))
        elif c == "#" and not in_word:
            nl = command.find("\n", i)
            i = n if nl < 0 else nl
        elif c in " \t":
            end_word()
            i += 1
        elif c in "\n;&|()<>":
            # a digit-only word right before a redirection is its file descriptor (2>/dev/null)
            if c in "<>" and in_word and "".join(word).isdigit():
                word.clear()
                in_word = False
            end_word()
            op = _operator(command, i)
            tokens.append((op, True))
            i += len(op)
        else:
            word.append(c)
            in_word = True
            i += 1
    end_word()
    return tokens, inner


def _operator(command: str, i: int) -> str:
    for op in ("&&", "||", ";;", "|&", *_REDIRECTS):
        if command.startswith(op, i):
            return op
    return command[i]


def _double_quoted(command: str, i: int, word: list[str], inner: list[str]) -> int:
    n = len(command)
    while i < n:
        c = command[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n:
            word.append(command[i + 1])
            i += 2
        elif c == "`":
            close = command.find("`", i + 1)
            if close < 0:
                raise _Refuse
            inner.append(command[i + 1 : close])
            i = close + 1
        elif c == "$" and i + 1 < n and command[i + 1] == "(":
            body, i = _balanced(command, i + 2)
            if body.startswith("("):
                inner.extend(_substitutions(body))
            else:
                inner.append(body)
        else:
            word.append(c)
            i += 1
    raise _Refuse


def _ansi_c_quoted(command: str, i: int, word: list[str]) -> int:
    """``$'…'``: backslash escapes anything, including a quote; returns the index after it."""
    n = len(command)
    while i < n:
        c = command[i]
        if c == "\\":
            if i + 1 >= n:
                raise _Refuse
            word.append(command[i + 1])
            i += 2
            continue
        if c == "'":
            return i + 1
        word.append(c)
        i += 1
    raise _Refuse


def _balanced(command: str, i: int) -> tuple[str, int]:
    """The text up to the ``)`` that closes an opening ``(`` just before ``i``; and the index after."""
    depth, start, n = 1, i, len(command)
    quote: str | None = None
    while i < n:
        c = command[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 2
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return command[start:i], i + 1
        i += 1
    raise _Refuse


def _substitutions(text: str) -> list[str]:
    """Bodies of ``$(…)`` and backticks inside ``text`` (single-quoted text, arithmetic)."""
    found: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("$((", i):
            i += 3  # arithmetic: look inside it for substitutions
            continue
        if text.startswith("$(", i):
            body, i = _balanced(text, i + 2)
            found.append(body)
            continue
        if text[i] == "`":
            close = text.find("`", i + 1)
            if close < 0:
                return found
            found.append(text[i + 1 : close])
            i = close + 1
            continue
        i += 1
    return found

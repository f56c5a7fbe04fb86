"""The read-only view of an agent's folder (``shard.daemon.files.tree``, ``paths``): what is listed,
what opens, and every way out of the folder refused — ``..``, absolute paths, symlinks out (to a
file, to a folder, through a folder), ``.git``, ignored files, files that are not files, huge and
binary files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shard.daemon.files import tree
from shard.daemon.files.paths import parts_of
from shard.protocol.errors import ErrorCode, ShardError


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A project with a repository, ignore rules, a secret beside it and links in and out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    root = tmp_path / "project"
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "config").write_text("[credential]\n\thelper = store\n")
    (root / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    (root / ".gitignore").write_text(".env\nbuild/\n*.log\n!keep.log\n")
    (root / ".env").write_text("API_KEY=sk-123\n")
    (root / "excluded.txt").write_text("x\n")
    (root / "build").mkdir()
    (root / "build" / "out.js").write_text("built\n")
    (root / "debug.log").write_text("log\n")
    (root / "keep.log").write_text("kept\n")
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / ".gitignore").write_text("generated.py\n")
    (root / "src" / "generated.py").write_text("gen\n")
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# Project\n")
    (root / "link-out").symlink_to(outside / "secret.txt")
    (root / "dir-out").symlink_to(outside)
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "link-in").symlink_to(root / "src" / "main.py")
    (root / "link-env").symlink_to(root / ".env")
    (root / "link-git").symlink_to(root / ".git")
    return root


def names(result: tree.FsListResult) -> dict[str, str]:
    return {e.name: e.kind for e in result.entries}


def refused(call: object, code: ErrorCode) -> str:
    with pytest.raises(ShardError) as caught:
        call()  # type: ignore[operator]
    assert caught.value.code == code, caught.value.message
    return caught.value.message


def test_the_root_lists_what_git_would_show_folders_first(folder: Path) -> None:
    listed = tree.list_folder(str(folder), [])
    kinds = [e.kind for e in listed.entries]
    assert kinds == sorted(kinds, key=lambda k: k != "dir")  # folders first
    assert names(listed) == {
        "src": "dir",
        "dir-out": "link",
        "dangling": "link",
        "link-out": "link",
        "link-in": "file",
        "link-env": "file",
        "link-git": "dir",
        ".gitignore": "file",
        "keep.log": "file",
        "README.md": "file",
    }
    # .git, .env, excluded.txt (info/exclude), build/, debug.log: counted, never named
    assert listed.hidden == 5
    assert listed.entries[0].kind == "dir"
    assert next(e for e in listed.entries if e.name == "README.md").size == len("# Project\n")
    assert next(e for e in listed.entries if e.name == "link-in").symlink is True


def test_a_subfolder_applies_its_own_ignore_file(folder: Path) -> None:
    listed = tree.list_folder(str(folder), parts_of("src"))
    assert names(listed) == {"deep": "dir", ".gitignore": "file", "main.py": "file"}
    assert listed.hidden == 1
    assert listed.path == "src"


def test_a_file_opens_as_text(folder: Path) -> None:
    read = tree.read_file(str(folder), parts_of("src/main.py"))
    assert (read.text, read.binary, read.truncated, read.size) == ("print('hi')\n", False, False, 12)


def test_a_symlink_inside_opens_as_its_target(folder: Path) -> None:
    assert tree.read_file(str(folder), parts_of("link-in")).text == "print('hi')\n"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "src/../../outside/secret.txt", "src/..", ".."])
def test_dot_dot_is_refused_before_the_disk(path: str) -> None:
    assert "'..'" in refused(lambda: parts_of(path), ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize("path", ["/etc/passwd", "~/.ssh/id_rsa", "//etc/passwd"])
def test_absolute_paths_are_refused(path: str) -> None:
    assert "relative" in refused(lambda: parts_of(path), ErrorCode.INVALID_REQUEST)


def test_a_nul_byte_is_refused() -> None:
    refused(lambda: parts_of("a\0b"), ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize("path", ["link-out", "dir-out/secret.txt", "dir-out"])
def test_symlinks_out_are_listed_but_never_opened(folder: Path, path: str) -> None:
    message = refused(lambda: tree.read_file(str(folder), parts_of(path)), ErrorCode.PERMISSION_DENIED)
    assert "SECRET" not in message


def test_a_dangling_symlink_inside_is_not_found(folder: Path) -> None:
    refused(lambda: tree.read_file(str(folder), parts_of("dangling")), ErrorCode.NOT_FOUND)


def test_a_symlinked_folder_out_is_not_listed_into(folder: Path) -> None:
    refused(lambda: tree.list_folder(str(folder), parts_of("dir-out")), ErrorCode.PERMISSION_DENIED)


@pytest.mark.parametrize("path", [".git/config", ".git", "src/../.git/config", "./.git/info/exclude"])
def test_git_contents_are_never_shown(folder: Path, path: str) -> None:
    with pytest.raises(ShardError) as caught:
        tree.read_file(str(folder), parts_of(path))
    assert caught.value.code in (ErrorCode.PERMISSION_DENIED, ErrorCode.INVALID_REQUEST)


def test_git_reached_through_a_symlink_is_refused(folder: Path) -> None:
    refused(lambda: tree.read_file(str(folder), parts_of("link-git/config")), ErrorCode.PERMISSION_DENIED)
    refused(lambda: tree.list_folder(str(folder), parts_of("link-git")), ErrorCode.PERMISSION_DENIED)


@pytest.mark.parametrize("path", [".env", "build/out.js", "debug.log", "excluded.txt", "src/generated.py"])
def test_ignored_files_do_not_open(folder: Path, path: str) -> None:
    message = refused(lambda: tree.read_file(str(folder), parts_of(path)), ErrorCode.PERMISSION_DENIED)
    assert "ignored" in message


def test_an_ignored_file_reached_through_a_symlink_does_not_open(folder: Path) -> None:
    refused(lambda: tree.read_file(str(folder), parts_of("link-env")), ErrorCode.PERMISSION_DENIED)


def test_an_ignored_folder_is_not_listed_into(folder: Path) -> None:
    refused(lambda: tree.list_folder(str(folder), parts_of("build")), ErrorCode.PERMISSION_DENIED)


def test_a_negated_rule_shows_the_file(folder: Path) -> None:
    assert tree.read_file(str(folder), parts_of("keep.log")).text == "kept\n"


def test_missing_paths_are_not_found(folder: Path) -> None:
    refused(lambda: tree.read_file(str(folder), parts_of("nope.txt")), ErrorCode.NOT_FOUND)
    refused(lambda: tree.list_folder(str(folder), parts_of("nope")), ErrorCode.NOT_FOUND)


def test_folders_and_files_are_not_mistaken(folder: Path) -> None:
    refused(lambda: tree.read_file(str(folder), parts_of("src")), ErrorCode.INVALID_REQUEST)
    refused(lambda: tree.list_folder(str(folder), parts_of("README.md")), ErrorCode.INVALID_REQUEST)


def test_a_fifo_is_neither_listed_nor_read(folder: Path) -> None:
    os.mkfifo(folder / "pipe")
    assert "pipe" not in names(tree.list_folder(str(folder), []))
    refused(lambda: tree.read_file(str(folder), parts_of("pipe")), ErrorCode.INVALID_REQUEST)


def test_a_huge_file_is_cut_at_the_limit(folder: Path) -> None:
    (folder / "huge.txt").write_bytes(b"a" * (tree.MAX_READ * 3))
    read = tree.read_file(str(folder), parts_of("huge.txt"))
    assert read.truncated is True
    assert read.size == tree.MAX_READ * 3
    assert read.text is not None
    assert len(read.text) == tree.MAX_READ


def test_a_cut_inside_a_character_stays_text(folder: Path) -> None:
    (folder / "wide.txt").write_bytes(b"a" + "é".encode() * tree.MAX_READ)
    read = tree.read_file(str(folder), parts_of("wide.txt"))
    assert read.truncated is True
    assert read.binary is False
    assert read.text is not None
    assert read.text.startswith("aé")


@pytest.mark.parametrize("body", [b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", b"\xff\xfe\xfa not utf-8"])
def test_binary_files_come_without_text(folder: Path, body: bytes) -> None:
    (folder / "blob.bin").write_bytes(body)
    read = tree.read_file(str(folder), parts_of("blob.bin"))
    assert (read.binary, read.text, read.size) == (True, None, len(body))


def test_a_folder_gone_is_not_found(tmp_path: Path) -> None:
    refused(lambda: tree.list_folder(str(tmp_path / "gone"), []), ErrorCode.NOT_FOUND)


def test_a_long_listing_is_cut(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree, "MAX_ENTRIES", 3)
    listed = tree.list_folder(str(folder), [])
    assert len(listed.entries) == 3
    assert listed.truncated is True


# --- fs.complete ------------------------------------------------------------------------------


def test_completion_lists_matching_folders_only(tmp_path: Path) -> None:
    for name in ("proj-a", "proj-b", "other", ".hidden-proj"):
        (tmp_path / name).mkdir()
    (tmp_path / "proj-file").write_text("not a folder")
    done = tree.complete(str(tmp_path / "proj"), None)
    assert done.directories == [str(tmp_path / "proj-a"), str(tmp_path / "proj-b")]
    assert tree.complete(str(tmp_path / ".hid"), None).directories == [str(tmp_path / ".hidden-proj")]
    assert str(tmp_path / ".hidden-proj") not in tree.complete(str(tmp_path) + "/", None).directories


def test_completion_never_lists_shard_home(tmp_path: Path) -> None:
    home = tmp_path / "shard-home"
    (home / "sessions").mkdir(parents=True)
    (tmp_path / "shard-project").mkdir()
    (tmp_path / "link-home").symlink_to(home)
    assert tree.complete(str(tmp_path / "shard"), str(home)).directories == [str(tmp_path / "shard-project")]
    assert tree.complete(str(home) + "/", str(home)).directories == []
    assert tree.complete(str(tmp_path / "link-home") + "/se", str(home)).directories == []
    assert tree.complete(str(tmp_path / "link"), str(home)).directories == []


def test_completion_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert tree.complete(str(tmp_path / "no" / "such"), None).directories == []


def test_completion_needs_an_absolute_path() -> None:
    refused(lambda: tree.complete("relative/pa", None), ErrorCode.INVALID_REQUEST)


def test_completion_expands_the_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "code").mkdir()
    assert tree.complete("~/co", None).directories == [str(tmp_path / "code")]


# --- keys and Shard's own state ----------------------------------------------------------------


def test_keys_and_shard_home_inside_the_folder_are_never_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".shard" / "security").mkdir(parents=True)
    (home / "code").mkdir()
    (home / "code" / "key-link").symlink_to(home / ".ssh" / "id_ed25519")
    hidden = (str(home / ".shard"), str(home / ".ssh"))
    listed = tree.list_folder(str(home), [], hidden)
    assert names(listed) == {"code": "dir"}
    assert listed.hidden == 2
    assert names(tree.list_folder(str(home), ["code"], hidden)) == {}
    for path in (".ssh/id_ed25519", "code/key-link"):
        refused(lambda p=path: tree.read_file(str(home), parts_of(p), hidden), ErrorCode.PERMISSION_DENIED)
    refused(lambda: tree.list_folder(str(home), [".shard"], hidden), ErrorCode.PERMISSION_DENIED)


def test_a_folder_inside_a_hidden_place_was_chosen_and_is_shown(tmp_path: Path) -> None:
    worktree = tmp_path / "shard-home" / "worktrees" / "ws-1"
    worktree.mkdir(parents=True)
    (worktree / "main.py").write_text("x = 1\n")
    read = tree.read_file(str(worktree), ["main.py"], (str(tmp_path / "shard-home"),))
    assert read.text == "x = 1\n"

"""The daemon's own git runs nothing a repository's files name (issue 25, item 2).

A confined command may write the project's ``.git/config`` (or a file it includes, or a worktree's
``.git`` file); the daemon's git then runs unconfined, on ``workspace.create``, ``list``, ``status``
and ``retire``. Each test plants one way in a real repository whose command would ``touch`` a
marker, drives the four commands through the daemon's broker (``shard.testing.broker``: the real
``Workspaces`` service, real git performed inline) and asserts after each that the marker was never
made. One test does the same through a real ``shard daemon`` process.
"""

from __future__ import annotations

import http.server
import os
import shlex
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.testing import text_step
from shard.testing.broker import BrokerHarness

GIT_ID = ["-c", "user.name=Shard Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *GIT_ID, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )
    return done.stdout.strip()


def make_repository(path: Path) -> Path:
    """A repository whose ``.txt`` files name the driver ``pwn`` for filtering, diffing and merging
    (the repository chooses the name: nothing in the daemon can know it beforehand)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / ".gitattributes").write_text("*.txt filter=pwn diff=pwn merge=pwn\n")
    (path / "a.txt").write_text("tracked\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repository(tmp_path / "project")


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[BrokerHarness]:
    h = BrokerHarness()
    h.broker.workspaces.root = tmp_path / "home" / "worktrees"
    yield h
    assert h.wire_problems() == []


def touch(marker: Path) -> str:
    return f"touch {shlex.quote(str(marker))}"


def restat(path: Path) -> None:
    """The same bytes, a new mtime: git must look at the content again (through a clean filter)."""
    path.write_bytes(path.read_bytes())
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def every_command(harness: BrokerHarness, project: Path, marker: Path) -> dict[str, Any]:
    """create, list, status (after a tracked file was touched), retire; the marker checked after each.
    Returns the create answer (a create git refuses ends the run there)."""
    client = harness.connect()
    created = client.request({"type": "workspace.create", "cwd": str(project)})
    assert not marker.exists(), f"workspace.create ran the repository's code: {created}"
    if not created["success"]:
        return created
    ws = created["data"]["workspace"]
    restat(Path(ws["cwd"]) / "a.txt")
    client.request({"type": "workspace.list"})
    assert not marker.exists(), "workspace.list ran the repository's code"
    status = client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"]})
    assert status["success"], status
    assert not marker.exists(), "workspace.status ran the repository's code"
    harness.runtime(created["data"]["agent_id"]).exit(0)
    retired = client.request(
        {
            "type": "workspace.retire",
            "workspace_id": ws["workspace_id"],
            "branch_disposition": "delete_confirmed",
        }
    )
    assert not marker.exists(), f"workspace.retire ran the repository's code: {retired}"
    assert retired["success"], retired
    return created


# --- keys of the repository's own config --------------------------------------------------------


def test_core_fsmonitor_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    git(project, "config", "core.fsmonitor", touch(marker))
    assert every_command(harness, project, marker)["success"]


def test_a_smudge_filter_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    git(project, "config", "filter.pwn.smudge", f"{touch(marker)}; cat")
    assert every_command(harness, project, marker)["success"]


def test_a_clean_filter_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    git(project, "config", "filter.pwn.clean", f"{touch(marker)}; cat")
    assert every_command(harness, project, marker)["success"]


def test_a_process_filter_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    git(project, "config", "filter.pwn.process", touch(marker))
    assert every_command(harness, project, marker)["success"]


def test_a_required_filter_does_not_stop_the_checkout(harness: BrokerHarness, project: Path, marker: Path):
    """``required`` makes git fail when the driver cannot run; the daemon's git runs no driver, so
    it must not be required either (the checkout goes on, unfiltered)."""
    git(project, "config", "filter.pwn.smudge", f"{touch(marker)}; cat")
    git(project, "config", "filter.pwn.required", "true")
    assert every_command(harness, project, marker)["success"]


def test_a_worktree_config_of_another_worktree_is_read_too(
    harness: BrokerHarness, project: Path, marker: Path
):
    """``extensions.worktreeConfig``: a driver named in a worktree's own ``config.worktree``."""
    git(project, "config", "core.repositoryformatversion", "1")
    git(project, "config", "extensions.worktreeConfig", "true")
    git(project, "config", "--worktree", "filter.pwn.smudge", f"{touch(marker)}; cat")
    assert every_command(harness, project, marker)["success"]


# --- configuration pulled in from elsewhere -----------------------------------------------------


def test_a_driver_named_in_an_included_file_never_runs(
    harness: BrokerHarness, project: Path, marker: Path, tmp_path: Path
):
    included = tmp_path / "elsewhere" / "extra.cfg"
    included.parent.mkdir()
    included.write_text(f'[filter "pwn"]\n\tsmudge = "{touch(marker)}; cat"\n')
    git(project, "config", "include.path", "../../elsewhere/extra.cfg")  # relative to .git/config
    assert every_command(harness, project, marker)["success"]


def test_a_driver_named_in_a_conditional_include_for_worktrees_only_never_runs(
    harness: BrokerHarness, project: Path, marker: Path, tmp_path: Path
):
    """The include applies to linked worktrees' git dirs only, so reading the configuration from the
    main checkout would not see it: every include counts, whatever its condition."""
    included = tmp_path / "worktrees-only.cfg"
    included.write_text(
        f'[filter "pwn"]\n\tsmudge = "{touch(marker)}; cat"\n\tclean = "{touch(marker)}; cat"\n'
    )
    git(project, "config", "includeIf.gitdir:**/.git/worktrees/**.path", str(included))
    assert every_command(harness, project, marker)["success"]


def test_core_fsmonitor_from_an_included_file_never_runs(
    harness: BrokerHarness, project: Path, marker: Path, tmp_path: Path
):
    included = tmp_path / "extra.cfg"
    included.write_text(f'[core]\n\tfsmonitor = "{touch(marker)}"\n')
    git(project, "config", "include.path", str(included))
    assert every_command(harness, project, marker)["success"]


# --- transports: a partial clone fetches a missing object on its own ----------------------------


def _promisor(project: Path, url: str) -> None:
    """The repository says it is a partial clone of ``url`` and lacks one blob of its tip, so any
    checkout asks that remote for it."""
    (project / "b.txt").write_text("lazily fetched\n")
    git(project, "add", "b.txt")
    git(project, "commit", "-q", "-m", "b")
    blob = git(project, "rev-parse", "HEAD:b.txt")
    (project / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    git(project, "config", "core.repositoryformatversion", "1")
    git(project, "config", "extensions.partialClone", "origin")
    git(project, "config", "remote.origin.promisor", "true")
    git(project, "config", "remote.origin.url", url)


def test_a_promisor_remotes_upload_pack_command_never_runs(
    harness: BrokerHarness, project: Path, marker: Path, tmp_path: Path
):
    source = make_repository(tmp_path / "source")
    _promisor(project, str(source))
    git(project, "config", "remote.origin.uploadpack", f"{touch(marker)}; git-upload-pack")
    created = every_command(harness, project, marker)
    assert created["success"] is False  # the object is missing, and git may not fetch it


def test_core_ssh_command_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    _promisor(project, "ssh://example.invalid/project.git")
    git(project, "config", "core.sshCommand", touch(marker))
    assert every_command(harness, project, marker)["success"] is False


def test_an_ext_transport_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    _promisor(project, f"ext::sh -c {touch(marker).replace(' ', '% ')}")
    git(project, "config", "protocol.ext.allow", "always")
    assert every_command(harness, project, marker)["success"] is False


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="shard-test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


def test_a_credential_helper_never_runs(harness: BrokerHarness, project: Path, marker: Path):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _promisor(project, f"http://127.0.0.1:{server.server_address[1]}/project.git")
        git(project, "config", "credential.helper", f"!{touch(marker)}; true")
        assert every_command(harness, project, marker)["success"] is False
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# --- a worktree's .git that leads elsewhere -----------------------------------------------------


def test_a_worktree_whose_git_file_leads_to_another_repository_is_not_followed(
    harness: BrokerHarness, project: Path, marker: Path, tmp_path: Path
):
    """A ``.git`` file rewritten to point at a repository of the command's own (whose config names a
    clean filter): list and status run no git in it, and retire is refused as ``unsafe``, the
    directory untouched.

    Covers: R10.1a.14
    """
    client = harness.connect()
    created = client.request({"type": "workspace.create", "cwd": str(project)})
    ws = created["data"]["workspace"]
    harness.runtime(created["data"]["agent_id"]).exit(0)
    own = make_repository(tmp_path / "own")
    git(own, "config", "filter.pwn.clean", f"{touch(marker)}; cat")
    cwd = Path(ws["cwd"])
    (cwd / ".git").write_text(f"gitdir: {own / '.git'}\n")
    restat(cwd / "a.txt")
    listed = client.request({"type": "workspace.list"})["data"]["workspaces"]
    status = client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"]})["data"]
    assert not marker.exists()
    assert "head" not in listed[0]["fingerprints"]  # own's HEAD is not this workspace's
    assert status["workspace"]["conflict"]["kind"] == "unsafe"
    refused = client.request({"type": "workspace.retire", "workspace_id": ws["workspace_id"]})
    assert refused["error"]["code"] == "CONFLICT"
    assert refused["error"]["data"]["kind"] == "unsafe"
    assert not marker.exists()
    assert (cwd / "a.txt").exists()
    assert (cwd / ".git").read_text() == f"gitdir: {own / '.git'}\n"


def test_a_worktree_that_lost_its_git_file_is_not_taken_for_the_repository_around_it(
    project: Path, marker: Path, tmp_path: Path
):
    """The daemon's folder inside a repository (a home directory kept in git): a worktree whose
    ``.git`` is gone must not be looked at as part of that repository, whose config names a clean
    filter.

    Covers: R10.1a.14
    """
    outer = make_repository(tmp_path / "outer")
    git(outer, "config", "filter.pwn.clean", f"{touch(marker)}; cat")
    harness = BrokerHarness()
    harness.broker.workspaces.root = outer / "worktrees"
    client = harness.connect()
    created = client.request({"type": "workspace.create", "cwd": str(project)})
    assert created["success"], created
    ws = created["data"]["workspace"]
    harness.runtime(created["data"]["agent_id"]).exit(0)
    (Path(ws["cwd"]) / ".git").unlink()
    restat(outer / "a.txt")
    client.request({"type": "workspace.list"})
    client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"]})
    refused = client.request({"type": "workspace.retire", "workspace_id": ws["workspace_id"]})
    assert not marker.exists()
    assert refused["error"]["data"]["kind"] == "unsafe"
    assert (Path(ws["cwd"]) / "a.txt").exists()
    assert harness.wire_problems() == []


# --- the same through a real daemon -------------------------------------------------------------


async def test_through_a_real_daemon_nothing_of_the_repository_runs(
    daemon_factory, project: Path, marker: Path
):
    """core.fsmonitor and a smudge/clean filter planted together; create, list, status, retire over
    the daemon's socket."""
    git(project, "config", "core.fsmonitor", touch(marker))
    git(project, "config", "filter.pwn.smudge", f"{touch(marker)}; cat")
    git(project, "config", "filter.pwn.clean", f"{touch(marker)}; cat")
    daemon = await daemon_factory([text_step("hi")], loop=True)
    client = await daemon.unix()
    created, _ = await client.request({"type": "workspace.create", "id": "c", "cwd": str(project)})
    assert created["success"], created
    ws = created["data"]["workspace"]
    restat(Path(ws["cwd"]) / "a.txt")
    await client.request({"type": "workspace.list", "id": "l"})
    await client.request({"type": "workspace.status", "id": "s", "workspace_id": ws["workspace_id"]})
    await client.request({"type": "workspace.retire", "id": "r", "workspace_id": ws["workspace_id"]})
    assert not marker.exists()
    await daemon.stop()

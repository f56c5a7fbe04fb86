"""``workspace.*`` through the broker in memory, on real git repositories (PROTOCOL §10.1a, §10.2)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from shard.testing.broker import BrokerHarness, MemoryClient
from workspaces.conftest import commit, git


def _create(client: MemoryClient, repo: Path, **fields) -> dict:
    response = client.request({"type": "workspace.create", "cwd": str(repo), **fields})
    assert response["success"], response
    return response["data"]


def _retire(client: MemoryClient, ws_id: str, disposition: str | None = None) -> dict:
    message = {"type": "workspace.retire", "workspace_id": ws_id}
    if disposition:
        message["branch_disposition"] = disposition
    return client.request(message)


def _branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def test_create_makes_a_worktree_on_a_new_branch_and_a_fresh_agent_in_it(harness: BrokerHarness, repo: Path):
    """A worktree under the daemon's folder on a generated branch from main's tip; a daemon-made
    agent and session whose cwd is the worktree; the answer carries both ids and the detail; every
    connection hears workspace_created (no correlation id) and agent_spawned.

    Covers: R10.1a.1, R10.1a.2, R10.1a.4, R10.1a.15, R10.1a.17, R10.1a.18, R10.1a.19, R10.2.7, R10.2.8
    """
    client, other = harness.connect(), harness.connect()
    head = git(repo, "rev-parse", "HEAD")
    data = _create(client, repo, label="Fix login")
    ws = data["workspace"]
    assert ws["workspace_id"].startswith("ws-")
    assert data["agent_id"].startswith("agent-")
    assert data["session_id"].startswith("sess-")
    assert Path(ws["cwd"]).is_dir()
    assert Path(ws["cwd"]).is_relative_to(harness.broker.workspaces.root)
    assert git(Path(ws["cwd"]), "rev-parse", "--abbrev-ref", "HEAD") == ws["branch"]
    assert ws["branch"].startswith("shard/fix-login-")
    assert (ws["base_ref"], ws["integration_target"]) == ("main", "main")
    assert ws["fingerprints"]["base"] == head
    assert (ws["label"], ws["lifecycle"], ws["ownership"]) == ("Fix login", "active", "managed")
    assert ws["counts"]["agents"] == 1
    assert ws["bindings"][0]["agent_id"] == data["agent_id"]
    assert harness.runtime(data["agent_id"]).record.cwd == ws["cwd"]
    for who in (client, other):
        (event,) = who.of_type("workspace_created")
        assert event["workspace"]["workspace_id"] == ws["workspace_id"]
        assert "id" not in event
        assert data["agent_id"] in [m["agent_id"] for m in who.of_type("agent_spawned")]


def test_given_branch_base_and_target_are_used_and_bad_ones_refused_before_anything_is_made(
    harness: BrokerHarness, repo: Path
):
    """Covers: R10.1a.4"""
    client = harness.connect()
    first = git(repo, "rev-parse", "HEAD")
    commit(repo, "second.txt")
    data = _create(client, repo, branch="feature/x", base_ref=first, integration_target="main", label="x")
    ws = data["workspace"]
    assert (ws["branch"], ws["base_ref"]) == ("feature/x", first)
    assert git(Path(ws["cwd"]), "rev-parse", "HEAD") == first
    before = (
        sorted(os.listdir(harness.broker.workspaces.root.parent))
        if harness.broker.workspaces.root.exists()
        else []
    )
    for bad in (
        {"branch": "feature/x"},  # taken
        {"branch": "-delete"},  # an option in disguise
        {"base_ref": "--output=/tmp/pwned"},
        {"integration_target": "no-such-branch"},
    ):
        response = client.request({"type": "workspace.create", "cwd": str(repo), **bad})
        assert response["success"] is False, bad
        assert response["error"]["code"] in ("INVALID_REQUEST", "CONFLICT"), response
    assert not Path("/tmp/pwned").exists()
    assert _branches(repo) == ["feature/x", "main"]
    assert len(git(repo, "worktree", "list").splitlines()) == 2
    assert len(harness.broker.agents) == 1
    assert before == sorted(os.listdir(harness.broker.workspaces.root.parent))


def test_outside_a_repository_create_is_refused(harness: BrokerHarness, tmp_path: Path):
    """Covers: R10.1a.4"""
    plain = tmp_path / "plain"
    plain.mkdir()
    response = harness.connect().request({"type": "workspace.create", "cwd": str(plain)})
    assert response["error"]["code"] == "INVALID_REQUEST"
    assert harness.broker.agents == {}


def test_clients_cannot_name_the_agent_or_session(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.16"""
    client = harness.connect()
    for field in ("agent_id", "session_id"):
        response = client.request({"type": "workspace.create", "cwd": str(repo), field: "x-1"})
        assert response["success"] is False
        assert response["error"]["code"] == "INVALID_REQUEST"
    assert harness.broker.agents == {}


def test_attach_adds_a_fresh_agent_to_the_same_worktree(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.5, R10.1a.15, R10.1a.17, R10.2.9"""
    client = harness.connect()
    created = _create(client, repo)
    ws_id = created["workspace"]["workspace_id"]
    attached = client.request(
        {"type": "workspace.attach", "workspace_id": ws_id, "name": "second", "version": 1}
    )
    data = attached["data"]
    assert data["agent_id"] != created["agent_id"]
    assert data["session_id"] != created["session_id"]
    assert data["workspace"]["counts"]["agents"] == 2
    assert harness.runtime(data["agent_id"]).record.cwd == created["workspace"]["cwd"]
    (event,) = client.of_type("workspace_attached")
    assert (event["agent_id"], event["session_id"]) == (data["agent_id"], data["session_id"])
    assert (
        client.request({"type": "workspace.attach", "workspace_id": "ws-nope"})["error"]["code"]
        == "NOT_FOUND"
    )


def test_list_groups_siblings_by_their_main_checkout(harness: BrokerHarness, repo: Path, tmp_path: Path):
    """Two workspaces of one project and one of another: listed grouped by repository_cwd (the main
    checkout's root, the same for siblings, asked for from inside a worktree too); a cwd filters to
    its repository; retired ones only on request.

    Covers: R10.1a.6, R10.1a.18, R10.1a.21, R10.1a.22, R10.1a.23
    """
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    commit(other, "a.txt")
    client = harness.connect()
    a = _create(client, repo, label="a")["workspace"]
    _create(client, other, label="z")
    b = _create(client, Path(a["cwd"]), label="b")["workspace"]  # from inside a sibling worktree
    assert a["repository_cwd"] == b["repository_cwd"] == os.path.realpath(repo)
    listed = client.request({"type": "workspace.list"})["data"]["workspaces"]
    groups = [w["repository_cwd"] for w in listed]
    assert groups == sorted(groups)
    assert [w["label"] for w in listed if w["repository_cwd"] == a["repository_cwd"]] == ["a", "b"]
    mine = client.request({"type": "workspace.list", "cwd": str(repo), "version": 1})["data"]["workspaces"]
    assert [w["label"] for w in mine] == ["a", "b"]
    harness.runtime(b["bindings"][0]["agent_id"]).exit(0)
    assert _retire(client, b["workspace_id"])["success"]
    assert [
        w["label"] for w in client.request({"type": "workspace.list", "cwd": str(repo)})["data"]["workspaces"]
    ] == ["a"]
    everything = client.request({"type": "workspace.list", "cwd": str(repo), "include_retired": True})
    assert [(w["label"], w["lifecycle"]) for w in everything["data"]["workspaces"]] == [
        ("a", "active"),
        ("b", "retired"),
    ]


def test_no_projection_or_event_names_a_git_dir(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.20, R10.1a.22"""
    client = harness.connect()
    ws = _create(client, repo)["workspace"]
    client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"]})
    client.request({"type": "workspace.list"})
    client.request({"type": "workspace.retire", "workspace_id": ws["workspace_id"]})  # refused: live
    text = str(client.received)
    common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
    gitdir = git(Path(ws["cwd"]), "rev-parse", "--path-format=absolute", "--git-dir")
    assert common not in text
    assert gitdir not in text
    assert ".git" not in text


def test_retire_is_refused_while_an_agent_runs_or_works_in_it(harness: BrokerHarness, repo: Path):
    """A busy agent, a live runtime, and a live agent working inside the worktree without being bound
    to it each refuse with typed data; nothing is removed.

    Covers: R10.1a.14, R10.2.10
    """
    client = harness.connect()
    data = _create(client, repo)
    ws = data["workspace"]
    runtime = harness.runtime(data["agent_id"])
    runtime.emit({"type": "status", "status": "streaming"})
    busy = _retire(client, ws["workspace_id"])
    assert busy["error"]["code"] == "CONFLICT"
    assert busy["error"]["data"] == {
        "kind": "busy",
        "workspace_id": ws["workspace_id"],
        "reason": busy["error"]["data"]["reason"],
    }
    runtime.emit({"type": "status", "status": "idle"})
    assert _retire(client, ws["workspace_id"])["error"]["data"]["kind"] == "live"
    runtime.exit(0)
    nested = client.create(str(Path(ws["cwd"])))  # by hand, inside the worktree
    assert _retire(client, ws["workspace_id"])["error"]["data"]["kind"] == "live"
    harness.runtime(nested).exit(0)
    conflicts = client.of_type("workspace_conflict")
    assert len(conflicts) == 3
    assert all(ws["cwd"] not in c["reason"] for c in conflicts)
    assert Path(ws["cwd"]).is_dir()
    assert _retire(client, ws["workspace_id"])["success"]


def test_a_dirty_worktree_is_never_retired(harness: BrokerHarness, repo: Path):
    """A modified tracked file, then only an untracked one: refused each time, everything kept.

    Covers: R10.1a.14, R10.1a.9
    """
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    cwd = Path(data["workspace"]["cwd"])
    (cwd / "README.md").write_text("changed\n")
    refused = _retire(client, data["workspace"]["workspace_id"], "delete_confirmed")
    assert refused["error"]["data"]["kind"] == "dirty"
    git(cwd, "checkout", "--", "README.md")
    (cwd / "notes.txt").write_text("untracked work\n")
    assert _retire(client, data["workspace"]["workspace_id"], "keep")["error"]["data"]["kind"] == "dirty"
    assert (cwd / "notes.txt").read_text() == "untracked work\n"
    assert data["workspace"]["branch"] in _branches(repo)


def test_keep_retires_without_deleting_the_branch(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.11, R10.1a.8"""
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    ws = data["workspace"]
    retired = _retire(client, ws["workspace_id"])["data"]["workspace"]
    assert retired["lifecycle"] == "retired"
    assert retired["tombstone"]["branch_deleted"] is False
    assert not Path(ws["cwd"]).exists()
    assert ws["branch"] in _branches(repo)
    (event,) = client.of_type("workspace_retired")
    assert event["workspace"]["workspace_id"] == ws["workspace_id"]
    again = _retire(client, ws["workspace_id"])
    assert again["error"]["data"]["kind"] == "retired"
    assert (
        client.request({"type": "workspace.attach", "workspace_id": ws["workspace_id"]})["error"]["code"]
        == "CONFLICT"
    )


def test_an_unmerged_branch_needs_confirmation_then_delete_confirmed_deletes_it(
    harness: BrokerHarness, repo: Path
):
    """delete_if_merged on a branch with its own commit: CONFLICT confirmation_required, nothing
    retired; delete_confirmed retires and deletes it.

    Covers: R10.1a.10, R10.1a.12, R10.1a.13
    """
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    ws = data["workspace"]
    commit(Path(ws["cwd"]), "work.txt")
    refused = _retire(client, ws["workspace_id"], "delete_if_merged")
    assert refused["error"]["code"] == "CONFLICT"
    error = refused["error"]["data"]
    assert error["kind"] == "confirmation_required"
    assert error["workspace_id"] == ws["workspace_id"]
    assert error["confirmation_disposition"] == "delete_confirmed"
    assert error["reason"]
    assert Path(ws["cwd"]).is_dir()
    assert ws["branch"] in _branches(repo)
    done = _retire(client, ws["workspace_id"], "delete_confirmed")["data"]["workspace"]
    assert done["tombstone"]["branch_deleted"] is True
    assert ws["branch"] not in _branches(repo)


def test_a_merged_branch_is_deleted_by_delete_if_merged(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.10"""
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    ws = data["workspace"]
    commit(Path(ws["cwd"]), "work.txt")
    git(repo, "merge", "-q", "--ff-only", ws["branch"])
    done = _retire(client, ws["workspace_id"], "delete_if_merged")["data"]["workspace"]
    assert done["tombstone"]["branch_deleted"] is True
    assert ws["branch"] not in _branches(repo)
    assert (repo / "work.txt").exists()  # the merged work stays where it was merged


def test_a_worktree_deleted_behind_the_daemons_back_is_missing_told_once(harness: BrokerHarness, repo: Path):
    """Listed and looked at repeatedly: lifecycle missing, one workspace_conflict; it can still be
    retired (git forgets it), branch kept.

    Covers: R10.1a.14, R10.2.7, R10.2.10
    """
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    ws = data["workspace"]
    shutil.rmtree(ws["cwd"])
    for _ in range(3):
        listed = client.request({"type": "workspace.list"})["data"]["workspaces"]
        status = client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"]})["data"]
    assert listed[0]["lifecycle"] == status["workspace"]["lifecycle"] == "missing"
    assert status["workspace"]["conflict"]["kind"] == "missing"
    assert len(client.of_type("workspace_conflict")) == 1
    assert _retire(client, ws["workspace_id"])["success"]
    assert ws["branch"] in _branches(repo)
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_a_repository_gone_is_missing_authority(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.14"""
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    shutil.rmtree(repo / ".git")
    refused = _retire(client, data["workspace"]["workspace_id"])
    assert refused["error"]["data"]["kind"] == "missing_authority"
    assert Path(data["workspace"]["cwd"]).is_dir()


def test_a_worktree_git_no_longer_knows_is_unsafe(harness: BrokerHarness, repo: Path):
    """The worktree was removed through git and the directory made again by something else.

    Covers: R10.1a.14
    """
    client = harness.connect()
    data = _create(client, repo)
    harness.runtime(data["agent_id"]).exit(0)
    cwd = Path(data["workspace"]["cwd"])
    git(repo, "worktree", "remove", str(cwd))
    cwd.mkdir()
    (cwd / "precious.txt").write_text("not git's\n")
    refused = _retire(client, data["workspace"]["workspace_id"], "delete_confirmed")
    assert refused["error"]["data"]["kind"] == "unsafe"
    assert (cwd / "precious.txt").exists()


def test_workspaces_survive_a_restart(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.2"""
    client = harness.connect()
    ws = _create(client, repo)["workspace"]
    again = BrokerHarness(manifests=harness.manifests)
    again.broker.workspaces.root = harness.broker.workspaces.root
    listed = again.connect().request({"type": "workspace.list"})["data"]["workspaces"]
    assert [(w["workspace_id"], w["cwd"], w["lifecycle"]) for w in listed] == [
        (ws["workspace_id"], ws["cwd"], "active")
    ]
    assert again.wire_problems() == []


def test_version_1_is_accepted_and_other_versions_are_not(harness: BrokerHarness, repo: Path):
    """Covers: R10.1a.3, R10.1a.7"""
    client = harness.connect()
    ws = _create(client, repo, version=1)["workspace"]
    assert client.request({"type": "workspace.status", "workspace_id": ws["workspace_id"], "version": 1})[
        "success"
    ]
    for version in (2, True, "1"):
        response = client.request(
            {"type": "workspace.status", "workspace_id": ws["workspace_id"], "version": version}
        )
        assert response["error"]["code"] == "INVALID_REQUEST"

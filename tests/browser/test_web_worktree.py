"""A workspace agent's Changes view and the file tree's keys, in real Chromium against a real daemon
on a real repository: the worktree against its base (workspace.diff: refreshed when shown, on
Refresh and after a turn ends; binary and cut files in words; file names stay text); the Retire
dialog (keys declared with aria-keyshortcuts, Escape closes it, the rest of the page inert), a
refusal for a live agent and the way out, retire with keep, delete_if_merged → confirmation →
delete_confirmed, every tab told; and the WAI-ARIA treeview keys. Light, dark, 1400 px and 390 px,
with screenshots and the axe-core audit."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_steps import (
    permission,
    screenshot,
    select_agent,
    send,
    start_daemon,
)
from playwright.async_api import expect
from test_web_phone_and_audit import OVERFLOW, PHONE, WIDE, audit

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [tool_step("write", {"path": "notes.txt", "content": "from the agent\n"}), text_step("Wrote.")]
MARKUP = "<img src=x onerror=window.pwned=1>.txt"
NO_MARKUP = "() => window.pwned === undefined && !document.querySelector('#changes img, #changes script')"


def git(cwd: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *ident, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


# the CSP is bypassed only so that the audit can inject axe-core
CONTEXT_OPTIONS = {"bypass_csp": True, "viewport": WIDE}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-worktree") / "home", SCRIPT)
    async for started in start_daemon(home):
        yield started


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("worktree") / "project"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 41\n")
    (root / "src" / "util.py").write_text("X = 1\n")
    (root / "docs" / "guide.md").write_text("# Guide\n")
    (root / "README.md").write_text("# Project\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


async def workspace_agent(page: Any, repo: Path) -> tuple[str, Path]:
    """A new agent in a new workspace of ``repo``, made with the form, opened: (its id, worktree)."""
    form = page.locator("#create")
    before = set(await page.locator(".agent-row").evaluate_all("rows => rows.map(r => r.dataset.agentId)"))
    await form.locator("input[name=cwd]").fill(str(repo))
    await form.locator("input[name=workspace]").check()
    await form.locator("button[type=submit]").click()
    new = "".join(f':not([data-agent-id="{known}"])' for known in before)
    selected = page.locator(f".agent-row.selected{new}")
    await expect(selected).to_have_count(1)
    await form.locator("input[name=workspace]").uncheck()
    agent_id: str = await selected.get_attribute("data-agent-id")
    await expect(page.locator("#agent-status")).to_have_text("idle")
    cwd = await page.evaluate(f"() => window.shard.store.state.agents.get({agent_id!r}).info.cwd")
    return agent_id, Path(cwd)


async def open_changes(page: Any) -> None:
    """The Changes panel open, whatever an earlier test of the module's page left it as."""
    if await page.locator("#changes").is_hidden():
        await page.locator("#changes-btn").click()
    await expect(page.locator("#changes")).to_be_visible()


def worktree_file(page: Any, path: str) -> Any:
    return page.locator(f'#changes .worktree-file[data-path="{path}"]')


async def shots(page: Any, name: str, what: str) -> None:
    """Light and dark at 1400 px and 390 px, each audited; the page is left light and wide."""
    for size, width in ((WIDE, "1400"), (PHONE, "390")):
        await page.set_viewport_size(size)
        for scheme in ("light", "dark"):
            await page.emulate_media(color_scheme=scheme)
            await audit(page, f"{what}, {scheme}, {width} px")
            await screenshot(page, f"{name}-{width}-{scheme}")
        if size == PHONE:
            assert await page.evaluate(OVERFLOW) <= 0, f"{what} overflows at 390 px"
    await page.emulate_media(color_scheme="light")
    await page.set_viewport_size(WIDE)


async def test_the_file_tree_is_walked_with_the_keyboard(page, repo):
    await workspace_agent(page, repo)
    await page.locator("#files-btn").click()
    tree = page.locator("#files [role=tree]")
    await expect(tree.locator("[role=treeitem]")).to_have_count(3)  # docs, src, README.md
    focused = "() => document.activeElement?.dataset?.path ?? null"
    # one tab stop: the first row; Tab reaches it from the Refresh button
    assert await tree.locator('[role=treeitem][tabindex="0"]').count() == 1
    await page.locator("#files .files-refresh").focus()
    await page.keyboard.press("Tab")
    assert await page.evaluate(focused) == "docs"
    await page.keyboard.press("ArrowDown")
    assert await page.evaluate(focused) == "src"
    await page.keyboard.press("ArrowRight")  # opens src
    src = tree.locator('[role=treeitem][data-path="src"]')
    await expect(src).to_have_attribute("aria-expanded", "true")
    await expect(src.locator("[role=group] > [role=treeitem]")).to_have_count(2)
    await expect(src.locator('[data-path="src/app.py"]')).to_have_attribute("aria-level", "2")
    await expect(src).to_have_accessible_name("src")  # its own line, not the entries under it
    await page.keyboard.press("ArrowRight")  # to its first child
    assert await page.evaluate(focused) == "src/app.py"
    await page.keyboard.press("Enter")
    await expect(page.locator("#files .file-code code")).to_contain_text("return 41")
    await expect(src.locator('[data-path="src/app.py"]')).to_have_attribute("aria-selected", "true")
    await page.keyboard.press("ArrowDown")
    await page.keyboard.press(" ")
    await expect(page.locator("#files .file-path")).to_have_text("src/util.py")
    await page.keyboard.press("ArrowLeft")  # to the parent
    assert await page.evaluate(focused) == "src"
    await page.keyboard.press("ArrowLeft")  # closes it
    await expect(src).to_have_attribute("aria-expanded", "false")
    await page.keyboard.press("End")
    assert await page.evaluate(focused) == "README.md"
    await page.keyboard.press("Home")
    assert await page.evaluate(focused) == "docs"
    await page.keyboard.press("r")  # type-ahead
    assert await page.evaluate(focused) == "README.md"
    assert await tree.locator('[role=treeitem][tabindex="0"]').count() == 1
    await audit(page, "the file tree")
    await screenshot(page, "80-tree-keys-light")
    await page.locator("#files-btn").click()  # closed again


async def test_the_changes_view_shows_the_worktree_against_its_base(page, repo):
    _, tree = await workspace_agent(page, repo)
    await open_changes(page)
    worktree = page.locator("#changes .worktree")
    await expect(worktree.locator("h3")).to_contain_text("Worktree against main")
    await expect(worktree.locator(".changes-empty")).to_have_text("No change against main yet.")
    await expect(worktree.locator(".worktree-branch")).to_contain_text("shard/")
    (tree / "src" / "app.py").write_text("def main():\n    return 42\n")
    (tree / MARKUP).write_text("<script>window.pwned=2</script>\n")
    (tree / "logo.bin").write_bytes(bytes(range(256)))
    await worktree.locator(".worktree-refresh").click()
    await expect(worktree.locator(".worktree-file")).to_have_count(3)
    await expect(worktree.locator(".worktree-summary")).to_contain_text("3 files changed")
    app = worktree_file(page, "src/app.py")
    await expect(app.locator(".diff-stat")).to_have_text("+1 \u22121")
    await app.locator("summary").click()
    await expect(app.locator(".hunk .line-add")).to_contain_text("return 42")
    await expect(app.locator(".hunk .line-del")).to_contain_text("return 41")
    markup = worktree_file(page, MARKUP)
    await expect(markup.locator(".change-path")).to_have_text(MARKUP)
    await markup.locator("summary").click()
    await expect(markup.locator(".hunk .line-add")).to_have_text("+<script>window.pwned=2</script>\n")
    binary = worktree_file(page, "logo.bin")
    await binary.locator("summary").click()
    await expect(binary.locator(".worktree-note")).to_have_text("A binary file: its changes are not shown.")
    assert await page.evaluate(NO_MARKUP)
    # a turn of the agent ends: the view asks git again by itself
    await send(page, "write the notes")
    await expect(permission(page)).to_have_count(1)
    await permission(page).get_by_role("button", name="Allow once", exact=True).click()
    await expect(page.locator("#conversation .message.assistant .text", has_text="Wrote.")).to_have_count(1)
    await expect(worktree_file(page, "notes.txt")).to_have_count(1)
    await expect(worktree.locator(".worktree-file")).to_have_count(4)  # src/app.py still changed
    await expect(page.locator('#changes .conversation-edits .change[data-path="notes.txt"]')).to_have_count(1)
    await shots(page, "81-worktree", "the worktree's changes")


async def test_retire_is_refused_while_its_agent_runs_then_keeps_the_branch_in_every_tab(page, context, repo):
    agent, tree = await workspace_agent(page, repo)
    branch = git(tree, "branch", "--show-current")
    other = await context.new_page()
    await other.goto("/")
    await select_agent(other, agent)
    await other.locator("#changes-btn").click()
    await expect(other.locator("#changes .worktree .changes-empty")).to_be_visible()
    await open_changes(page)
    retire = page.locator("#changes .worktree-retire")
    await retire.click()
    dialog = page.locator("dialog.retire")
    await expect(dialog).to_be_visible()
    keep = dialog.get_by_role("button", name="Keep the branch")
    await expect(keep).to_have_attribute("aria-keyshortcuts", "K")
    await expect(dialog.get_by_role("button", name="Delete the branch if merged")).to_have_attribute(
        "aria-keyshortcuts", "D"
    )
    await expect(keep).to_be_focused()
    # the rest of the page is inert while it is open: Tab stays in the dialog
    for _ in range(4):
        await page.keyboard.press("Tab")
        assert await page.evaluate("() => !!document.activeElement.closest('dialog.retire')")
    await shots(page, "82-retire-dialog", "the retire dialog")
    await page.keyboard.press("Escape")
    await expect(dialog).to_have_count(0)
    await expect(retire).to_be_focused()
    await retire.click()
    await expect(keep).to_be_focused()
    await page.keyboard.press("k")
    refusal = dialog.locator(".retire-refusal")
    await expect(refusal).to_have_text(
        "An agent still runs in this workspace: stop it first (Stop its agents below, or Terminate in"
        " its header), then retire."
    )
    await screenshot(page, "83-retire-refused-light")
    await dialog.get_by_role("button", name="Stop its agents").click()
    note = dialog.locator(".retire-note")
    await expect(note).to_have_text("Its agent was stopped; choose again to retire.")
    await dialog.get_by_role("button", name="Keep the branch").click()
    await expect(dialog).to_have_count(0)
    retired = f"This workspace is retired: its worktree is gone, branch {branch} kept."
    await expect(page.locator("#changes .worktree-retired")).to_have_text(retired)
    await expect(other.locator("#changes .worktree-retired")).to_have_text(retired)  # the broadcast
    assert not tree.exists()
    assert git(repo, "branch", "--list", branch)
    await other.close()


async def test_deleting_a_branch_git_cannot_show_merged_asks_first(page, repo):
    agent, tree = await workspace_agent(page, repo)
    branch = git(tree, "branch", "--show-current")
    (tree / "feature.txt").write_text("only on the branch\n")
    git(tree, "add", ".")
    git(tree, "commit", "-qm", "a commit only on the branch")
    stopped = await page.evaluate(
        f"() => window.shard.conn.request({{type: 'agent.terminate', agent_id: {agent!r}}})"
    )
    assert stopped["success"], stopped
    # (a terminate that came while the page's catalog reads ran is deferred until they are answered)
    await page.wait_for_function(
        f"() => window.shard.store.state.agents.get({agent!r}).info.runtime_state === 'stopped'"
    )
    await open_changes(page)
    await page.locator("#changes .worktree-refresh").click()
    await expect(worktree_file(page, "feature.txt")).to_have_count(1)  # a commit of the branch shows
    await page.locator("#changes .worktree-retire").click()
    dialog = page.locator("dialog.retire")
    await expect(dialog.get_by_role("button", name="Keep the branch")).to_be_focused()
    await page.keyboard.press("d")
    await expect(dialog).to_contain_text("Git says:")  # (a failure shows what it says instead)
    await expect(dialog.locator(".retire-reason")).to_have_text(
        f"Git says: git cannot show branch {branch} reachable from main."
    )
    anyway = dialog.get_by_role("button", name="Delete anyway")
    await expect(anyway).to_have_attribute("aria-keyshortcuts", "A")
    await expect(anyway).to_be_focused()
    await screenshot(page, "84-retire-confirm-light")
    await page.keyboard.press("a")
    await expect(dialog).to_have_count(0)
    await expect(page.locator("#changes .worktree-retired")).to_contain_text(f"branch {branch} deleted")
    assert git(repo, "branch", "--list", branch) == ""
    # Opening another agent once watched the retired one as an observer, which tried to start its
    # runtime in the removed folder: an error toast. It is attached no more.
    await page.evaluate(
        """() => {
            const conn = window.shard.conn, send = conn.request.bind(conn);
            window.attachedSince = [];
            conn.request = (m) => {
                if (m.type === "agent.attach") window.attachedSince.push(m.agent_id);
                return send(m);
            };
        }"""
    )
    other, _ = await workspace_agent(page, repo)
    attached = await page.evaluate("() => window.attachedSince")
    assert other in attached
    assert agent not in attached
    assert await page.evaluate(f"() => window.shard.store.state.agents.get({agent!r}).role") is None

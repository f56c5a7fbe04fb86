"""The rest of issue 29's front end, in real Chromium against a real daemon: the agent's folder as a
read-only file tree (ignored files and .git hidden, a link out listed and not opened, a file
highlighted), renaming an agent (every tab, a reload), the new-agent form's folder completion,
sandbox and new-workspace options, word-level marks in a changed line, the PNG icons, and on a
phone the head's actions behind one menu. Light, dark and 390 px, with screenshots and the
axe-core audit."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
from browser_steps import (
    create_agent,
    permission,
    screenshot,
    send,
    start_daemon,
)
from playwright.async_api import expect
from test_web_phone_and_audit import OVERFLOW, PHONE, SMALL_TARGETS, WIDE, audit

from shard.testing import DaemonProcess, text_step, tool_step, write_scripted_home

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]

SCRIPT = [
    tool_step(
        "edit",
        {"path": "src/app.py", "edits": [{"old_text": "answer = 41", "new_text": "answer = 42"}]},
    ),
    text_step("Edited."),
]


# the CSP is bypassed only so that the audit can inject axe-core
CONTEXT_OPTIONS = {"bypass_csp": True, "viewport": WIDE}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = write_scripted_home(tmp_path_factory.mktemp("web-files") / "home", SCRIPT)
    async for started in start_daemon(home):
        yield started


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git project with an ignored secret, a repository, and a link to a secret outside it."""
    base = tmp_path_factory.mktemp("files")
    (base / "secret.txt").write_text("TOP SECRET outside\n")
    root = base / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    answer = 41\n    return answer  # the answer\n")
    (root / "README.md").write_text("# Project\n")
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("API_KEY=sk-not-for-the-tree\n")
    (root / "<img src=x onerror=window.pwned=1>.txt").write_text("<script>window.pwned=2</script>\n")
    (root / "out").symlink_to(base / "secret.txt")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "start"]):
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
        subprocess.run(git, cwd=root, check=True)
    return root


def tree_row(page: Any, path: str) -> Any:
    return page.locator(f'#files .tree-row[data-path="{path}"]')


def tree_item(page: Any, path: str) -> Any:
    """The row's own line (an open folder's treeitem holds its children's rows too)."""
    return page.locator(f'#files .tree-row[data-path="{path}"] > .tree-item')


async def test_the_files_view_shows_the_folder_read_only_without_what_is_hidden(page, repo):
    await create_agent(page, repo)
    await page.locator("#files-btn").click()
    await expect(tree_row(page, "src")).to_be_visible()
    shown = await page.locator("#files .tree-row").evaluate_all("rows => rows.map(r => r.dataset.path)")
    assert set(shown) == {"src", ".gitignore", "README.md", "out", "<img src=x onerror=window.pwned=1>.txt"}
    note = page.locator("#files .files-note", has_text="2 hidden (.git and ignored files)")
    await expect(note).to_be_visible()
    # a link out is listed, marked, and opens nothing
    await expect(tree_row(page, "out")).to_have_attribute("aria-disabled", "true")
    await tree_item(page, "src").click()
    await expect(tree_row(page, "src")).to_have_attribute("aria-expanded", "true")
    await tree_item(page, "src/app.py").click()
    code = page.locator("#files .file-code code")
    await expect(code).to_contain_text("answer = 41")
    await expect(code.locator(".hljs-keyword").first).to_have_text("def")
    await expect(page.locator("#files .file-gutter")).to_have_text("1\n2\n3")
    await expect(page.locator("#files .file-path")).to_have_text("src/app.py")
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await audit(page, f"files view, {scheme}")
        await screenshot(page, f"60-files-{scheme}")
    await page.emulate_media(color_scheme="light")
    # a file whose name is markup is text, and so is its content
    await tree_item(page, "<img src=x onerror=window.pwned=1>.txt").click()
    await expect(code).to_have_text("<script>window.pwned=2</script>\n")
    made = "() => window.pwned === undefined && !document.querySelector('#files script, #files img')"
    assert await page.evaluate(made)
    assert "sk-not-for-the-tree" not in await page.content()
    assert "TOP SECRET" not in await page.content()


async def test_a_changed_line_marks_the_words_that_changed_and_refresh_reads_it_again(page):
    code = page.locator("#files .file-code code")
    await tree_item(page, "src/app.py").click()
    await expect(code).to_contain_text("answer = 41")
    await send(page, "change the answer")
    await expect(permission(page)).to_have_count(1)
    await expect(permission(page).locator("mark.word-add").first).to_have_text("42")
    await permission(page).get_by_role("button", name="Allow once", exact=True).click()
    card = page.locator("#conversation .tool").last
    await expect(page.locator("#conversation .message.assistant .text", has_text="Edited.")).to_have_count(1)
    await expect(card.locator("details.tool-details")).to_have_attribute("open", "")  # a diff opens its card
    await expect(card.locator(".hunk mark.word-del").first).to_have_text("41")
    await expect(card.locator(".hunk mark.word-add").first).to_have_text("42")
    await page.locator("#files .files-refresh").click()
    await expect(code).to_contain_text("answer = 42")
    await screenshot(page, "61-word-diff-light")
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "61-word-diff-dark")
    await page.emulate_media(color_scheme="light")


async def test_a_rename_shows_in_every_tab_and_survives_a_reload(page, context):
    agent = await page.locator(".agent-row.selected").get_attribute("data-agent-id")
    other = await context.new_page()
    await other.goto("/")
    row = f'.agent-row[data-agent-id="{agent}"] .agent-name'
    await expect(other.locator(row)).to_contain_text("project")
    await page.locator("#rename").click()
    dialog = page.locator("dialog.rename")
    await expect(dialog).to_be_visible()
    await audit(page, "rename dialog")
    await screenshot(page, "62-rename-dialog-light")
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "62-rename-dialog-dark")
    await page.emulate_media(color_scheme="light")
    await dialog.locator("input[name=name]").fill("Fix the parser")
    await dialog.get_by_role("button", name="Save").click()
    await expect(page.locator(row)).to_have_text("Fix the parser")
    await expect(page.locator("#agent-title .title-name")).to_have_text("Fix the parser")
    await expect(other.locator(row)).to_have_text("Fix the parser")  # agent_changed, no reload
    await other.reload()
    await expect(other.locator(row)).to_have_text("Fix the parser")
    await page.locator("#rename").click()
    await dialog.get_by_role("button", name="Use the automatic name").click()
    await expect(other.locator(row)).not_to_have_text("Fix the parser")
    await expect(other.locator(row)).to_contain_text("project")
    await other.close()


async def test_the_form_completes_folders_and_offers_sandbox_and_workspace(page, repo):
    sent: list[dict[str, Any]] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(orjson.loads(f))))
    await page.reload()
    await expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    (repo.parent / "project-two").mkdir()
    cwd = page.locator("#create input[name=cwd]")
    await cwd.fill(str(repo.parent / "proj"))
    options = page.locator("#recent-folders option")
    completed = page.locator(f'#recent-folders option[value="{repo.parent / "project-two"}"]')
    await expect(completed).to_have_count(1)
    assert str(repo) in await options.evaluate_all("os => os.map(o => o.value)")
    form = page.locator("#create")
    await form.locator("select[name=sandbox]").select_option("ask")
    await audit(page, "the form with its options")
    await screenshot(page, "63-create-form-light")
    await page.emulate_media(color_scheme="dark")
    await screenshot(page, "63-create-form-dark")
    await page.emulate_media(color_scheme="light")
    await create_agent(page, repo.parent / "project-two")
    create = next(m for m in sent if m.get("type") == "agent.create")
    assert create["sandbox"] == "ask"
    # a new workspace: the sandbox is not an option there (workspace.create takes none)
    await form.locator("input[name=workspace]").check()
    await expect(form.locator("select[name=sandbox]")).to_be_disabled()
    before = await page.locator(".agent-row").count()
    await cwd.fill(str(repo))
    await form.locator("button[type=submit]").click()
    await expect(page.locator(".agent-row")).to_have_count(before + 1)
    made = next(m for m in sent if m.get("type") == "workspace.create")
    assert made["cwd"] == str(repo)
    assert "sandbox" not in made
    await expect(page.locator("#agent-title .title-where")).to_contain_text("worktrees")
    await form.locator("input[name=workspace]").uncheck()


async def test_on_a_phone_the_heads_actions_are_one_menu(page):
    await page.set_viewport_size(PHONE)
    await expect(page.locator("#more")).to_be_visible()
    await expect(page.locator("#terminate")).to_be_hidden()
    await page.locator("#more").click()
    await expect(page.locator("#more")).to_have_attribute("aria-expanded", "true")
    await expect(page.locator("#terminate")).to_be_visible()
    assert await page.evaluate(OVERFLOW) <= 0
    assert await page.evaluate(SMALL_TARGETS) == []
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await audit(page, f"phone, actions menu, {scheme}")
        await screenshot(page, f"64-phone-menu-{scheme}")
    await page.emulate_media(color_scheme="light")
    await page.keyboard.press("Escape")
    await expect(page.locator("#terminate")).to_be_hidden()
    await page.locator("#more").click()
    await page.locator("#files-btn").click()
    await expect(page.locator("#agent-actions")).not_to_have_attribute("data-open", "")
    await expect(page.locator("#files .tree-row").first).to_be_visible()
    assert await page.evaluate(OVERFLOW) <= 0
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await screenshot(page, f"65-phone-files-{scheme}")
    await page.emulate_media(color_scheme="light")
    await page.set_viewport_size(WIDE)


async def test_the_app_has_png_icons_for_installers(page):
    icons = await page.evaluate(
        "async () => { const m = await (await fetch('/app/manifest.webmanifest')).json();"
        " return Promise.all(m.icons.filter((i) => i.type === 'image/png').map(async (i) => {"
        " const r = await fetch(i.src); const b = await createImageBitmap(await r.blob());"
        " return [i.sizes, r.headers.get('content-type'), b.width, b.height]; })); }"
    )
    assert icons == [["192x192", "image/png", 192, 192], ["512x512", "image/png", 512, 512]]

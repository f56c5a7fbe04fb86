"""What ``shard run`` says of a tool call on stderr (issue 26 item 8): one ``»`` line naming the tool
and its command or path — one line whatever the arguments hold — and for a call nobody could
approve, why it was denied and the ``--allow`` that lets it run; the same in a run through a daemon.

Pure formatting first (``shard.cli.run_calls``), then the real command.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from shard.cli.run_calls import allowance, call_line, one_line, quoted
from shard.testing import DaemonProcess, run_shard, text_step, tool_step, write_scripted_home


def test_an_argument_is_one_line_cut_at_its_limit():
    assert one_line("echo one\necho two\r\nthree\tfour") == "echo one⏎echo two⏎three⇥four"
    assert one_line("bell\x07 and \x1b[31mred") == "bell\\x07 and \\x1b[31mred"
    assert one_line({"a": [1, "x\ny"]}) == '{"a":[1,"x\\ny"]}'
    long = one_line("x" * 500)
    assert len(long) == 120
    assert long.endswith("…")
    line = call_line("write", {"path": "notes.txt", "content": "a\n" * 400})
    assert "\n" not in line
    assert line.startswith("» write path=notes.txt content=a⏎a⏎")


def test_the_allowance_is_the_one_the_run_would_take(tmp_path: Path):
    cwd = str(tmp_path)
    assert (
        allowance("bash", {"command": "rm -rf build"}, outside=False, cwd=cwd)
        == "--allow 'bash:rm -rf build'"
    )
    assert allowance("bash", {"command": "cat /etc/passwd"}, outside=False, cwd=cwd) == "--allow bash"
    assert allowance("write", {"path": "a.txt"}, outside=False, cwd=cwd) == "--allow write"
    assert allowance("write", {"path": "/etc/x"}, outside=True, cwd=cwd) == "--yes-to-all"
    assert allowance("demo__shout", {}, outside=False, cwd=cwd) == "--allow demo__shout"
    assert quoted("bash:echo one\necho 'two'") == "$'bash:echo one\\necho \\'two\\''"
    assert quoted("bash:it's") == "'bash:it'\"'\"'s'"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.mark.parametrize("through", ["direct", "daemon"])
async def test_a_denied_call_names_itself_and_the_allow_that_lets_it_run(
    tmp_path: Path, project: Path, through: str
):
    """The model runs ``rm -rf build``, which nobody can approve: stderr shows ``» bash …`` and
    ``denied: …; to allow it: --allow 'bash:rm -rf build'`` (not the message addressed to the
    model); the run given that option, copied as it is, removes the folder."""
    home = write_scripted_home(
        tmp_path / "home", [tool_step("bash", {"command": "rm -rf build"}), text_step("ok")], loop=True
    )
    daemon = await DaemonProcess.start(home) if through == "daemon" else None
    try:
        code, _, raw = await run_shard(home, project, "run", "clean up")
        err = raw.decode()
        assert code == 0, err
        lines = err.splitlines()
        at = lines.index("» bash command=rm -rf build")
        denied = lines[at + 1]
        assert denied == "  denied: nobody can answer here; to allow it: --allow 'bash:rm -rf build'"
        assert "Permission denied" not in err, "the model's words are not the person's"
        assert (project / "build").is_dir()
        allow = shlex.split(denied.split("to allow it: ", 1)[1])
        code, _, raw = await run_shard(home, project, "run", *allow, "clean up")
        assert code == 0, raw.decode()
        assert not (project / "build").exists()
    finally:
        if daemon is not None:
            await daemon.kill()


async def test_a_call_with_a_multi_line_argument_is_one_line(tmp_path: Path, project: Path):
    """A command of two lines prints as one ``»`` line; its allowance stays one line too."""
    home = write_scripted_home(
        tmp_path / "home", [tool_step("bash", {"command": "echo one\necho two"}), text_step("ok")]
    )
    code, _, raw = await run_shard(home, project, "run", "go")
    lines = raw.decode().splitlines()
    assert code == 0
    at = lines.index("» bash command=echo one⏎echo two")
    assert (
        lines[at + 1] == "  denied: nobody can answer here; to allow it: --allow $'bash:echo one\\necho two'"
    )


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("headless", "  denied: nobody can answer here; to allow it: --allow write"),
        ("timeout", "  denied: no answer came in time; to allow it: --allow write"),
        ("websocket-client-3", "  denied by websocket-client-3"),
        ("abort", "  not run: the turn was aborted"),
    ],
)
def test_each_way_a_request_is_denied_is_said_once(
    capsys: pytest.CaptureFixture[str], source: str, said: str
):
    """The printer fed the events as a daemon forwards them (plain dicts): the call's line when it
    is asked about, one line for how it was denied, and not the model's message after it."""
    from shard.cli.run_daemon import _Event
    from shard.cli.run_output import TextPrinter

    printer = TextPrinter(lambda: None)
    printer.start("test/m", "build", "/project", [])
    call = {"type": "tool_call", "id": "tc-1", "name": "write", "args": {"path": "a.txt", "content": "x\ny"}}
    for event in (
        {"type": "message_complete", "message": {"role": "assistant", "content": [call]}},
        {"type": "permission_request", "request_id": "req-1", "tool_name": "write", "input": call["args"]},
        {"type": "permission_resolved", "request_id": "req-1", "decision": "deny", "source": source},
        {
            "type": "tool_result",
            "tool_call_id": "tc-1",
            "is_error": True,
            "content": {"message": "Permission denied: …"},
        },
    ):
        printer.show(_Event(event))
    lines = capsys.readouterr().err.splitlines()
    assert lines[1:] == ["» write path=a.txt content=x⏎y", said, "shard: waiting for the model…"]

"""``shard run`` for real work, visibly: pipes, Ctrl-C, per-run allowances and what stderr shows.

Every test runs the real command (``python -m shard run``) in a subprocess.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agent.mcp._servers import alive, pids, server_toml
from shard.testing import (
    recorded_requests,
    run_shard,
    shard_command,
    text_step,
    tool_step,
    write_scripted_home,
)

TOOLS = ["shard.testing.tools:TouchTool"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("notes\n")
    return root


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "SHARD_HOME": str(home)}


async def _run(home: Path, cwd: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = await run_shard(home, cwd, "run", *args)
    return code, out.decode(), err.decode()


def _session_rows(home: Path) -> list[dict]:
    """The entries of the run's session (none when it stopped before anything was recorded)."""
    files = list((home / "sessions").glob("*/session.jsonl"))
    assert len(files) <= 1, files
    return [orjson.loads(line) for f in files for line in f.read_bytes().splitlines() if line]


# --- pipes and signals ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [[], ["--json"]], ids=["text", "json"])
def test_a_closed_stdout_ends_the_run_quietly(tmp_path, project, mode):
    """``shard run … | head -1``: once the reader has its line and leaves, the run stops quietly —
    exit 141 (as SIGPIPE ends a pipeline member), no traceback, no provider error on stderr, and the
    session records no errored call, only the aborted turn."""
    step = tool_step("sleep", {"seconds": 0}, text="first line\n" + "more text\n" * 50)
    step.update(chunk=8, delay_ms=5)
    home = write_scripted_home(
        tmp_path / "home", [step, text_step("end")], extensions=["shard.testing.tools:SleepTool"]
    )
    argv = shard_command("run", *mode, "go")
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project, env=_env(home)
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert proc.stdout.readline()  # what head -1 takes
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(60) == 141, err
    assert "Traceback" not in err
    assert "PROVIDER_ERROR" not in err
    assert not [r for r in _session_rows(home) if r.get("incomplete") == "error"]


def test_ctrl_c_is_taken_before_shard_imports_anything():
    """``shard.cli``, the first module of the command, sets its SIGINT handler before it imports a
    module: ``import signal`` alone loads ``enum`` (25 ms, far more on a loaded machine), and a
    Ctrl-C within it was a traceback."""
    probe = (
        "import sys; before = set(sys.modules); import shard.cli, _signal; "
        "new = sorted(set(sys.modules) - before); "
        "print(' '.join(new)); print(_signal.getsignal(_signal.SIGINT) is not _signal.default_int_handler)"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded, handled = run.stdout.splitlines()
    assert set(loaded.split()) <= {"shard", "shard.cli", "_signal"}, loaded
    assert handled == "True"


def _before_shard(err: str) -> bool:
    """SIGINT came while CPython was starting, before shard.cli could take it: ``site`` or ``runpy``
    failed, or every frame of the traceback is the interpreter's (``python -m shard``'s own line
    that imports the command aside)."""
    if err.startswith(("Could not import runpy module\n", "Fatal Python error: init_import_site:")):
        return True
    frames = re.findall(r'File "([^"]+)"', err)
    ours = [f for f in frames if "/shard/" in f and not f.endswith("/shard/__main__.py")]
    return err.rstrip().endswith("KeyboardInterrupt") and bool(frames) and not ours


@pytest.mark.long
def test_ctrl_c_at_any_instant_exits_130_without_a_traceback(tmp_path, project):
    """SIGINT at 30 instants from 0 to 1.2 s after the start — imports, start-up, the model's stream,
    a tool — always exits 130 (or, before Python could even install a handler, by the signal
    itself), never with a traceback. On a loaded machine an early instant can land in CPython's own
    start, before any module of Shard runs (``site``, ``runpy`` finding ``shard``, the import of the
    package's first module): CPython's traceback there is nothing of Shard's to judge, and is let
    through — only when no frame of it is in Shard's code (``_before_shard``)."""
    step = tool_step("sleep", {"seconds": 0.3}, text="thinking aloud " * 20)
    step.update(chunk=5, delay_ms=10)
    home = write_scripted_home(
        tmp_path / "home",
        [step, text_step("end")],
        extensions=["shard.testing.tools:SleepTool"],
        record=False,
    )
    for i in range(30):
        argv = shard_command("run", "go")
        with subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=project, env=_env(home)
        ) as proc:
            try:
                proc.wait(timeout=i * 0.04)  # the instant under test (0 s to 1.2 s), not a synchronization
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)
            assert proc.stderr is not None
            err = proc.stderr.read().decode()
            code = proc.wait(60)
        if code in (1, -signal.SIGINT) and _before_shard(err):
            continue
        assert code in (130, -signal.SIGINT, 0), (i, code, err)
        assert "Traceback" not in err, (i, err)


def test_a_ctrl_c_cpython_cannot_raise_still_ends_the_command_with_130():
    """Once asyncio closed its loop SIGINT raises KeyboardInterrupt again; one landing in a callback
    CPython cannot raise from (an import lock's weakref callback) was "Exception ignored" with a
    traceback, and the command went on as if no Ctrl-C had come."""
    probe = (
        "import weakref, shard.cli.main as cli\n"
        "def interrupted(_ref):\n"
        "    raise KeyboardInterrupt\n"
        "def command():\n"
        "    class Lock: pass\n"
        "    lock = Lock(); ref = weakref.ref(lock, interrupted); del lock\n"
        "    print('went on', flush=True)\n"
        "    return 0\n"
        "cli.main = command\n"
        "cli.entry()\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 130, (run.returncode, run.stderr)
    assert "went on" not in run.stdout
    assert "Traceback" not in run.stderr
    assert "Exception ignored" not in run.stderr


def test_ctrl_c_mid_reply_says_the_reply_was_stopped(tmp_path, project):
    """Ctrl-C while the answer streams: stdout keeps what arrived, stderr says "shard: reply stopped
    by you" (the text above is not the whole answer), and the session records the reply aborted.

    Covers: R9.2.7
    """
    stalled = {"blocks": [{"type": "text", "text": "The answer is"}], "stall": True}
    home = write_scripted_home(tmp_path / "home", [stalled], record=False)
    with subprocess.Popen(
        shard_command("run", "go"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
        env=_env(home),
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert proc.stdout.read(len("The answer is")) == b"The answer is"  # the reply is streaming
        proc.send_signal(signal.SIGINT)
        out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
        assert proc.wait(60) == 130, err
    assert out == "\n"
    assert "shard: reply stopped by you" in err.splitlines()
    [reply] = [r for r in _session_rows(home) if r.get("message", {}).get("role") == "assistant"]
    assert reply["message"]["stop_reason"] == "aborted"


# --- allowances ----------------------------------------------------------------------------------


async def test_by_default_a_headless_run_denies_writes(tmp_path, project):
    """Without allowances, nothing that needs approval runs: the write is denied."""
    home = write_scripted_home(
        tmp_path / "home", [tool_step("write", {"path": "out.txt", "content": "x"}), text_step("ok")]
    )
    _code, _out, err = await _run(home, project, "write it")
    assert not (project / "out.txt").exists()
    assert "  denied: nobody can answer here; to allow it: --allow write" in err.splitlines()


async def test_allow_a_tool_inside_the_working_directory_only(tmp_path, project, tmp_path_factory):
    """``--allow write`` lets the run write inside the project; a write outside is still denied."""
    outside = tmp_path_factory.mktemp("elsewhere") / "x.txt"
    steps = [
        tool_step("write", {"path": "out.txt", "content": "made\n"}),
        tool_step("write", {"path": str(outside), "content": "no\n"}),
        text_step("done"),
    ]
    home = write_scripted_home(tmp_path / "home", steps)
    code, _out, err = await _run(home, project, "--allow", "write", "write them")
    assert code == 0, err
    assert (project / "out.txt").read_text() == "made\n"
    assert not outside.exists()
    assert "allowed inside the working directory: write" in err


async def test_allow_names_an_mcp_tool_before_its_server_has_started(tmp_path, project):
    """``--allow demo__shout`` is accepted for a configured MCP server (its tools are known only once
    it starts, in the run's first turn): that tool runs, another of its mutating tools is denied,
    and the run stops the server on its way out."""
    written = tmp_path / "pids"
    steps = [
        tool_step("demo__shout", {"text": "hi"}),
        tool_step("demo__env_names", {}),
        text_step("done"),
    ]
    servers = server_toml(env={"DEMO_PIDS": str(written)})
    home = write_scripted_home(tmp_path / "home", steps, extra_toml=servers)
    code, _out, err = await _run(home, project, "--allow", "demo__shout", "--json", "go")
    assert code == 0, err
    results = [row for row in map(orjson.loads, _out.splitlines()) if row["type"] == "tool_result"]
    assert results[0]["content"] == {"kind": "text", "text": "HI!"}
    assert results[1]["is_error"] is True
    assert "Permission denied" in results[1]["content"]["message"]
    assert not alive(pids(written)[0])
    code, _out, err = await _run(home, project, "--allow", "nope__shout", "go")
    assert code == 2
    assert "nope__shout" in err


async def test_allow_bash_pattern_uses_the_gate_rules(tmp_path, project):
    """``--allow 'bash:cat notes.txt'`` is the gate's signature grant: `cat` of another file inside
    runs, `cat` of a file outside and another program do not."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET\n")
    steps = [
        tool_step("bash", {"command": "cat notes.txt"}),
        tool_step("bash", {"command": f"cat {secret}"}),
        tool_step("bash", {"command": "touch made-by-bash"}),
        text_step("done"),
    ]
    home = write_scripted_home(tmp_path / "home", steps)
    _code, out, _err = await _run(home, project, "--allow", "bash:cat other.txt", "--json", "go")
    results = [e for e in map(orjson.loads, out.splitlines()) if e["type"] == "tool_result"]
    assert results[0]["is_error"] is False
    assert results[0]["content"]["text"] == "notes\n"
    assert results[1]["is_error"] is True
    assert "TOPSECRET" not in out
    assert results[2]["is_error"] is True
    assert not (project / "made-by-bash").exists()


async def test_yes_to_all_allows_everything_and_says_so(tmp_path, project):
    """``--yes-to-all`` runs every call, and stderr says so loudly before anything runs."""
    home = write_scripted_home(
        tmp_path / "home", [tool_step("bash", {"command": "touch made"}), text_step("ok")]
    )
    code, _out, err = await _run(home, project, "--yes-to-all", "go")
    assert code == 0, err
    assert (project / "made").exists()
    assert "EVERY tool call runs without asking" in err.splitlines()[1]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("nosuchtool", "there is no tool named 'nosuchtool'"),
        ("read:x", "only bash takes a pattern"),
        ("bash:", "needs a command"),
    ],
)
async def test_a_wrong_allowance_is_one_clear_line(tmp_path, project, spec, says):
    """A mistaken --allow stops the run before it starts, with exit 2 and one line."""
    home = write_scripted_home(tmp_path / "home", [text_step("never")])
    code, out, err = await _run(home, project, "--allow", spec, "go")
    assert code == 2
    assert out == ""
    assert says in err
    assert len(err.strip().splitlines()) == 1, err


# --- what stderr shows ---------------------------------------------------------------------------


async def test_stderr_shows_the_model_the_wait_and_a_summary(tmp_path, project):
    """Text mode says which model runs, with its context window and where that came from, that it
    waits for the model, and ends with one line of tokens and the session id."""
    home = write_scripted_home(tmp_path / "home", [text_step("hello")])
    code, _out, err = await _run(home, project, "hi")
    lines = err.splitlines()
    assert code == 0, err
    assert lines[0].startswith("shard: test/m (window 100,000 from config.toml; mode build) in ")
    assert "shard: waiting for the model…" in lines
    assert lines[-1].startswith("[")
    assert "tokens in" in lines[-1]
    assert "session sess-" in lines[-1]


async def test_a_retry_names_its_cause(tmp_path, project):
    """A provider nobody listens for: each retry and the final error say "connection refused", not
    a vague "connection lost"."""
    with socket.socket() as s:  # a port with nothing behind it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        'default_model = "local/m"\n[retry]\nmax_attempts = 2\nbase_delay = 0.01\n'
        f'[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        'models = [{ id = "m" }]\n'
    )
    code, _out, err = await _run(home, project, "hi")
    assert code == 1
    retry = next(line for line in err.splitlines() if "retrying in" in line)
    assert "connection refused" in retry, err
    assert "connection lost" not in err


# --- which session: --continue, --session ---------------------------------------------------------


def _closing_session(err: str) -> str:
    return err.rsplit("session ", 1)[1].split("]")[0]


def _prompts(request: dict) -> list[str]:
    return [
        b["text"]
        for m in request["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "text"
    ]


async def test_continue_restores_the_latest_session_of_this_directory(tmp_path, project):
    """``--continue`` picks the newest session whose cwd is the current directory — not a newer
    one elsewhere — and the model sees that conversation; after a fresh run here, it picks that."""
    home = write_scripted_home(tmp_path / "home", [text_step("noted")], loop=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _, _, err = await _run(home, project, "the first thing")
    first = _closing_session(err)
    _, _, err = await _run(home, elsewhere, "somewhere else")
    code, out, err = await _run(home, project, "--continue", "and then?")
    assert code == 0, err
    assert out.strip() == "noted"
    assert _closing_session(err) == first
    assert _prompts(recorded_requests(home)[-1]) == ["the first thing", "and then?"]

    _, _, err = await _run(home, project, "a new start")
    newer = _closing_session(err)
    assert newer != first
    code, _, err = await _run(home, project, "--continue", "more")
    assert _closing_session(err) == newer
    assert _prompts(recorded_requests(home)[-1]) == ["a new start", "more"]


async def test_session_restores_that_session_from_anywhere(tmp_path, project):
    """``--session ID`` continues that session in its own working directory, wherever it is run."""
    home = write_scripted_home(tmp_path / "home", [text_step("noted")], loop=True)
    _, _, err = await _run(home, project, "remember the tea")
    session = _closing_session(err)
    code, _, err = await _run(home, tmp_path, "--session", session, "what was it?")
    assert code == 0, err
    assert _closing_session(err) == session
    assert f"in {project}" in err.splitlines()[0]
    assert _prompts(recorded_requests(home)[-1]) == ["remember the tea", "what was it?"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--continue", "hi"], "no session to continue in"),
        (["--continue", "--session", "sess-1", "hi"], "give one"),
        (["--session", "sess-nosuch", "hi"], "no session 'sess-nosuch'"),
        (["--session", "not-an-id", "hi"], "not a session id"),
    ],
)
async def test_a_session_that_cannot_be_chosen_is_one_line(tmp_path, project, args, says):
    """No session here to continue, both flags at once, an unknown or malformed id: one line on
    stderr, a non-zero exit, nothing on stdout, no traceback."""
    home = write_scripted_home(tmp_path / "home", [text_step("never")])
    code, out, err = await _run(home, project, *args)
    assert code != 0
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert says in err

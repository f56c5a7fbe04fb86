"""``shard run PROMPT``: the headless one-shot."""

from __future__ import annotations

from pathlib import Path

import orjson

from shard.protocol.codec import parse_event
from shard.testing import run_shard, text_step, tool_step, write_scripted_home


async def _run(home: Path, cwd: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = await run_shard(home, cwd, "run", *args)
    return code, out.decode(), err.decode()


async def test_run_prints_the_assistant_text(home, project):
    """stdout is exactly the assistant's text; tool activity goes to stderr; exit 0."""
    write_scripted_home(home, [tool_step("ls", {}, text="Looking.\n"), text_step("There are 2 entries.")])
    code, out, err = await _run(home, project, "what is here?")
    assert code == 0, err
    assert out == "Looking.\nThere are 2 entries.\n"
    assert "» ls" in err
    assert "│ config.json" in err, "what the tool returned is previewed on stderr"
    assert "session sess-" in err.splitlines()[-1]


async def test_run_json_prints_the_event_stream(home, project):
    """--json prints every event as one JSON line: hello, sync, the prompt's response, the turn."""
    write_scripted_home(home, [text_step("hello there")])
    code, out, err = await _run(home, project, "--json", "hi")
    assert code == 0, err
    events = [orjson.loads(line) for line in out.splitlines()]
    assert [e["type"] for e in events[:3]] == ["hello", "sync", "response"]
    assert events[-2]["type"] == "turn_end"
    assert events[-1] == {"type": "status", "status": "idle"}
    for e in events:
        parse_event(e)  # every line is a valid protocol event


async def test_run_exits_nonzero_when_the_turn_fails(home, project):
    """A provider failure makes the exit code non-zero and is reported on stderr."""
    write_scripted_home(home, [{"blocks": [], "error": "model overloaded"}])
    code, _out, err = await _run(home, project, "hi")
    assert code == 1
    assert "PROVIDER_ERROR" in err
    assert "model overloaded" in err


async def test_run_without_a_model_explains_configuration(home, project):
    """No provider configured: exit 1 and a message that says how to configure one."""
    home.mkdir(parents=True)
    code, _out, err = await _run(home, project, "hi")
    assert code == 1
    assert "config.toml" in err
    assert "[[providers]]" in err


async def test_run_with_unknown_model_is_a_usage_error(home, project):
    """--model naming nothing in the catalog: exit 2 with the list of models and how to add one."""
    write_scripted_home(home, [text_step("x")])
    code, _out, err = await _run(home, project, "--model", "nope/x", "hi")
    assert code == 2
    assert "unknown model 'nope/x'" in err
    assert "test/m" in err
    assert '[[providers]] name = "nope"' in err
    assert "README: Configuration" in err


async def test_run_with_unknown_default_model_says_how_to_add_it(home, project):
    """default_model naming a model its provider does not list: exit 2, one line naming it and the
    snippet that adds it to that provider."""
    write_scripted_home(home, [text_step("x")])
    config = home / "config.toml"
    config.write_text(config.read_text().replace('default_model = "test/m"', 'default_model = "test/bigger"'))
    code, _out, err = await _run(home, project, "hi")
    assert code == 2
    assert err.count("\n") == 1, err
    assert "unknown default_model 'test/bigger' (models: test/m, scripted/demo)" in err
    assert "list it in provider 'test' in config.toml: models = [..., \"bigger\"]" in err


async def test_run_demo_model_works_offline(home, project):
    """The built-in scripted/demo model runs with no configuration at all and uses a real tool."""
    home.mkdir(parents=True)
    code, out, err = await _run(home, project, "--model", "scripted/demo", "hello")
    assert code == 0, err
    assert "offline demo" in out
    assert "config.toml" in out
    assert "» ls" in err

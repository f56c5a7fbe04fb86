"""config.toml mistakes are named: an unknown key or table is an error giving the line and the closest
known name, type errors say what was expected in plain words and where, and ``models = ["m1"]`` is
shorthand for ``[{ id = "m1" }]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.catalog import ModelCatalog
from shard.agent.config.settings import ConfigError, ModelConfig, SubagentConfig, load_config

PROVIDER = '[[providers]]\nname = "local"\nkind = "openai"\n'


def _mistake(home: Path, text: str) -> str:
    (home / "config.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(home)
    return info.value.message.replace(str(home / "config.toml"), "config.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'default_model = "local/m"\n\n[[provider]]\nname = "local"\nkind = "openai"\nmodels = ["m"]\n',
            "config.toml line 3: unknown table [[provider]] (did you mean [[providers]]?)",
        ),
        (
            'default_modle = "local/m"\n',
            "config.toml line 1: unknown key default_modle (did you mean default_model?)",
        ),
        (
            'default_model = "x/y"\ntheme = "dark"\n',
            "config.toml line 2: unknown key theme (known: default_model, [[providers]], [retry], "
            "[permissions], [compaction], [limits], [tools], [daemon], [subagents], [sandbox], "
            "[[mcp_servers]], [[hosts]])",
        ),
        (
            PROVIDER + 'api_key_evn = "LOCAL_KEY"\n',
            "config.toml line 4: unknown key providers[0].api_key_evn (did you mean api_key_env?)",
        ),
        (
            PROVIDER + 'models = [\n  { id = "a" },\n  { id = "b", context_windw = 8192 },\n]\n',
            "config.toml line 6: unknown key providers[0].models[1].context_windw "
            "(did you mean context_window?)",
        ),
        (
            PROVIDER + '[[providers.models]]\nid = "a"\nreasoning_levels = [{ id = "hi", budget = 9 }]\n',
            "config.toml line 6: unknown key providers[0].models[0].reasoning_levels[0].budget "
            "(did you mean budget_tokens?)",
        ),
        ("[retyr]\nmax_attempts = 3\n", "config.toml line 1: unknown table [retyr] (did you mean [retry]?)"),
        (
            "[retry]\nmax_attempts = 3\nmax_delays = 9\n",
            "config.toml line 3: unknown key retry.max_delays (did you mean max_delay?)",
        ),
        (
            "[permissions]\nheadless_timeot = 5\n",
            "config.toml line 2: unknown key permissions.headless_timeot (did you mean headless_timeout?)",
        ),
        (
            "[compaction]\nthreshhold = 0.5\n",
            "config.toml line 2: unknown key compaction.threshhold (did you mean threshold?)",
        ),
        (
            "[limits]\nmax_input = 4096\n",
            "config.toml line 2: unknown key limits.max_input (did you mean max_input_bytes?)",
        ),
        (
            '[tools]\nextension = ["a:b"]\n',
            "config.toml line 2: unknown key tools.extension (did you mean extensions?)",
        ),
        (
            "[daemon]\nmax_runtimes = 4\nmax_runtime = 4\n",
            "config.toml line 3: unknown key daemon.max_runtime (did you mean max_runtimes?)",
        ),
        (
            "[daemon]\nport = 9\n",
            "config.toml line 2: unknown key daemon.port (known: max_runtimes, warm_start)",
        ),
    ],
    ids=[
        "providers-table",
        "top-level-key",
        "no-close-name",
        "provider-key",
        "inline-model-key",
        "reasoning-level-key",
        "table-name",
        "retry",
        "permissions",
        "compaction",
        "limits",
        "tools",
        "daemon",
        "daemon-no-close-name",
    ],
)
def test_an_unknown_key_or_table_is_named_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    """An unknown top-level key or table, or an unknown key in [[providers]], a model, a reasoning
    level, [retry], [permissions], [compaction], [limits], [tools] or [daemon], is an error naming
    the line and the key with the closest known name (or the known names when none is close) —
    a ``[[provider]]`` typo no longer passes silently to fail later as "not in the catalog"."""
    assert _mistake(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            PROVIDER + 'models = [{ id = "m", context_window = "big" }]\n',
            "config.toml line 4: providers[0].models[0].context_window must be an integer, got a string",
        ),
        (
            PROVIDER + "base_url = 8080\n",
            "config.toml line 4: providers[0].base_url must be a string, got an integer",
        ),
        ('default_model = ["a"]\n', "config.toml line 1: default_model must be a string, got a list"),
        (
            'providers = "local"\n',
            "config.toml line 1: providers must be a list of tables ([[providers]]), got a string",
        ),
        (
            PROVIDER + 'models = "m"\n',
            "config.toml line 4: providers[0].models must be a list of model ids or tables, got a string",
        ),
        (
            "[compaction]\nenabled = 1\n",
            "config.toml line 2: compaction.enabled must be true or false, got an integer",
        ),
        ("[retry]\nmax_attempts = 0\n", "config.toml line 2: retry.max_attempts must be at least 1"),
        (
            '[[providers]]\nkind = "openai"\n\n' + PROVIDER,
            "config.toml line 1: providers[0].name is required",
        ),
        (
            "[subagents]\nmax_tasks = 0\n",
            "config.toml line 2: subagents.max_tasks must be a positive integer, got 0",
        ),
        (
            "[subagents]\nrun_timeout = 0\n",
            "config.toml line 2: subagents.run_timeout must be positive (leave it out for no deadline)",
        ),
        (
            '[subagents]\nmax_depth = "2"\n',
            "config.toml line 2: subagents.max_depth must be an integer, got a string",
        ),
    ],
    ids=[
        "integer",
        "string",
        "top-level",
        "list-of-tables",
        "list-of-models",
        "boolean",
        "zero",
        "required",
        "subagents-tasks",
        "subagents-timeout",
        "subagents-depth",
    ],
)
def test_a_wrong_value_says_what_was_expected_and_where(tmp_path: Path, text: str, message: str) -> None:
    """Type errors read as English ("must be an integer, got a string", never "must be a int") and
    name the line; a missing key names the line of its table; ``max_attempts = 0`` is refused rather
    than silently read as the default."""
    assert _mistake(tmp_path, text) == message


def test_models_may_be_listed_by_id(tmp_path: Path) -> None:
    """``models = ["m1", { id = "m2", … }]``: a string is shorthand for a table with just that id,
    and the two forms mix in one list."""
    (tmp_path / "config.toml").write_text(
        PROVIDER + 'models = ["m1", { id = "m2", context_window = 8192 }]\n'
    )
    config = load_config(tmp_path)
    assert config.providers[0].models == (ModelConfig(id="m1"), ModelConfig(id="m2", context_window=8192))
    catalog = ModelCatalog(config, env={})
    assert [e.id for e in catalog.entries] == ["local/m1", "local/m2", "scripted/demo"]


def test_an_empty_model_id_is_refused(tmp_path: Path) -> None:
    """``models = [""]`` names no model: an error, not a model called ""."""
    message = _mistake(tmp_path, PROVIDER + 'models = [""]\n')
    assert message == "config.toml line 4: providers[0].models[0] must not be an empty model id"


def test_an_odd_key_is_quoted_and_the_message_stays_one_line(tmp_path: Path) -> None:
    """A quoted key holding a newline or spaces is shown as TOML would write it, so the message stays
    one line (``shard daemon`` prints exactly one)."""
    message = _mistake(tmp_path, PROVIDER + '"odd\\nkey" = 2\n')
    assert "\n" not in message
    assert message.startswith('config.toml: unknown key providers[0]."odd\\nkey" (known: name, kind, ')


def test_subagents_settings_are_read(tmp_path: Path) -> None:
    """``[subagents]`` gives the daemon its launch policy and run deadline; absent keys are None
    (the daemon's defaults)."""
    (tmp_path / "config.toml").write_text("[subagents]\nmax_tasks = 3\nrun_timeout = 90\n")
    config = load_config(tmp_path)
    assert config.subagents == SubagentConfig(max_tasks=3, max_depth=None, run_timeout=90.0)
    assert load_config(tmp_path / "none").subagents == SubagentConfig()

"""config.toml loading and the model catalog built from it (with the built-in scripted/demo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.agent.catalog import (
    BASE_CAPABILITIES,
    DEMO_SCRIPT,
    REASONING_CAPABILITIES,
    ModelCatalog,
    capabilities_for,
)
from shard.agent.config.settings import (
    Config,
    ConfigError,
    ModelConfig,
    ProviderConfig,
    ReasoningLevelConfig,
    load_config,
    shard_home,
)
from shard.protocol.errors import ErrorCode, ShardError
from shard.protocol.framing import DEFAULT_MAX_LINE_BYTES

FULL = """
default_model = "local/qwen"

[limits]
max_input_bytes = 2048

[tools]
extensions = ["my_pkg.tools:GrepTool"]

[[providers]]
name = "local"
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "LOCAL_KEY"

[[providers.models]]
id = "qwen"
context_window = 32768

[[providers.models]]
id = "deep"
reasoning_levels = ["low", { id = "high", label = "High", description = "slow" }]
default_reasoning = "high"

[[providers]]
name = "fake"
kind = "scripted"
script = "scripts/fake.json"
record = "requests.jsonl"
models = [{ id = "qwen", script = "scripts/other.json" }]
"""


def write_config(home: Path, text: str) -> Path:
    path = home / "config.toml"
    path.write_text(text)
    return path


# --- config -------------------------------------------------------------------------------------


def test_no_config_file_means_defaults(tmp_path: Path) -> None:
    """Checks that a missing config.toml is not an error: no providers, no default model."""
    config = load_config(tmp_path)
    assert config == Config(home=tmp_path)
    assert config.max_input_bytes == DEFAULT_MAX_LINE_BYTES
    assert config.source is None


def test_a_full_config_is_parsed(tmp_path: Path) -> None:
    """Checks parsing of every supported key: providers with models and reasoning levels (string
    and table forms), limits, tool extensions."""
    path = write_config(tmp_path, FULL)

    config = load_config(tmp_path)

    assert config.source == path
    assert config.default_model == "local/qwen"
    assert config.max_input_bytes == 2048
    assert config.tool_extensions == ("my_pkg.tools:GrepTool",)
    local, fake = config.providers
    assert local == ProviderConfig(
        name="local",
        kind="openai",
        base_url="http://127.0.0.1:11434/v1",
        api_key_env="LOCAL_KEY",
        models=(
            ModelConfig(id="qwen", context_window=32768),
            ModelConfig(
                id="deep",
                reasoning_levels=(
                    ReasoningLevelConfig(id="low", label="low"),
                    ReasoningLevelConfig(id="high", label="High", description="slow"),
                ),
                default_reasoning="high",
            ),
        ),
    )
    assert (fake.kind, fake.script, fake.record) == ("scripted", "scripts/fake.json", "requests.jsonl")
    assert fake.models == (ModelConfig(id="qwen", script="scripts/other.json"),)
    assert config.resolve_path(fake.script) == tmp_path / "scripts" / "fake.json"
    assert config.resolve_path("/abs/x.json") == Path("/abs/x.json")


@pytest.mark.parametrize(
    ("toml", "names"),
    [
        ("default_model = 5", "default_model must be a string, got an integer"),
        ('providers = "local"', "providers must be a list"),
        ("providers = [1]", "providers[0] must be a table"),
        ('[[providers]]\nkind = "openai"', "providers[0].name is required"),
        ('[[providers]]\nname = "x"', "providers[0].kind is required"),
        (
            '[[providers]]\nname = "x"\nkind = "gemini"',
            "providers[0].kind must be one of openai, anthropic, scripted",
        ),
        (
            '[[providers]]\nname = "a/b"\nkind = "openai"',
            "providers[0].name must be non-empty and contain no '/'",
        ),
        ('[[providers]]\nname = ""\nkind = "openai"', "providers[0].name must be non-empty"),
        ('[[providers]]\nname = 3\nkind = "openai"', "providers[0].name must be a string, got an integer"),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\n[[providers]]\nname = "x"\nkind = "anthropic"',
            "providers[1].name 'x' is defined twice",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nbase_url = 1',
            "providers[0].base_url must be a string",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nmodels = [{ context_window = 5 }]',
            "providers[0].models[0].id is required",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nmodels = [1]',
            "providers[0].models[0] must be a model id or a table, got an integer",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nmodels = [{ id = "m", context_window = "big" }]',
            "providers[0].models[0].context_window must be an integer, got a string",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nmodels = [{ id = "m", context_window = true }]',
            "providers[0].models[0].context_window must be an integer, got a boolean",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nmodels = [{ id = "m", context_window = 0 }]',
            "providers[0].models[0].context_window must be positive",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\nmodels = [{ id = "m", reasoning_levels = [1] }]',
            "providers[0].models[0].reasoning_levels[0] must be a string or a table",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\n'
            'models = [{ id = "m", reasoning_levels = [{ label = "L" }] }]',
            "providers[0].models[0].reasoning_levels[0].id is required",
        ),
        (
            '[[providers]]\nname = "x"\nkind = "openai"\n'
            'models = [{ id = "m", reasoning_levels = ["low"], default_reasoning = "max" }]',
            "providers[0].models[0].default_reasoning 'max' is not one of its reasoning_levels",
        ),
        ("limits = 3", "limits must be a table, got an integer"),
        ("[limits]\nmax_input_bytes = 10", "limits.max_input_bytes must be at least 1024"),
        (
            "[limits]\nmax_input_bytes = 2048.0",
            "limits.max_input_bytes must be an integer, got a decimal number",
        ),
        ('[tools]\nextensions = "a:b"', "tools.extensions must be a list"),
        (
            '[tools]\nextensions = ["no_colon"]',
            "tools.extensions must be a list of 'module:attribute' strings",
        ),
        ("[tools]\nextensions = [1]", "tools.extensions must be a list of 'module:attribute' strings"),
        ("default_model = ", "is not valid TOML"),
    ],
)
def test_bad_config_names_the_key_and_the_file(tmp_path: Path, toml: str, names: str) -> None:
    """Checks ConfigError (an INVALID_REQUEST ShardError): a wrong type, a missing required key, an
    unknown kind or a bad value is reported with the file path and the offending key."""
    path = write_config(tmp_path, toml)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert isinstance(info.value, ShardError)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert str(path) in info.value.message
    assert names in info.value.message


def test_non_utf8_config_is_a_config_error(tmp_path: Path) -> None:
    """Checks that undecodable bytes are a ConfigError, not a crash."""
    (tmp_path / "config.toml").write_bytes(b'default_model = "\xff"')
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_config(tmp_path)


def test_shard_home_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks the home directory: --home beats $SHARD_HOME beats ~/.shard."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("SHARD_HOME", raising=False)
    assert shard_home() == (tmp_path / "user" / ".shard").resolve()
    monkeypatch.setenv("SHARD_HOME", str(tmp_path / "env"))
    assert shard_home() == (tmp_path / "env").resolve()
    assert shard_home(tmp_path / "flag") == (tmp_path / "flag").resolve()


# --- the catalog --------------------------------------------------------------------------------


def test_the_demo_model_is_always_listed_and_never_the_default(tmp_path: Path) -> None:
    """Checks the built-in scripted/demo entry: present with no config, labelled as not an LLM,
    its script shipped in the package, and not made the default."""
    catalog = ModelCatalog(load_config(tmp_path))
    [demo] = catalog.entries
    assert demo.id == "scripted/demo"
    assert demo.provider.builtin is True
    assert demo.label is not None
    assert "not an LLM" in demo.label
    assert demo.model.context_window == 200_000
    assert catalog.default_selection is None
    assert DEMO_SCRIPT.is_file()


def test_configured_models_come_first_then_the_demo(tmp_path: Path) -> None:
    """Checks catalog order and ids "provider/model", with labels only for scripted providers."""
    write_config(tmp_path, FULL)
    catalog = ModelCatalog(load_config(tmp_path))
    assert [e.id for e in catalog.entries] == ["local/qwen", "local/deep", "fake/qwen", "scripted/demo"]
    assert catalog.default_selection == "local/qwen"
    assert catalog.entries[0].label is None
    assert catalog.entries[2].label is not None


def test_a_provider_named_scripted_replaces_the_built_in(tmp_path: Path) -> None:
    """Checks that a configured provider called "scripted" takes the built-in's place (no duplicate
    "scripted/..." namespace)."""
    write_config(tmp_path, '[[providers]]\nname = "scripted"\nkind = "scripted"\nmodels = [{ id = "mine" }]')
    catalog = ModelCatalog(load_config(tmp_path))
    assert [e.id for e in catalog.entries] == ["scripted/mine"]
    assert catalog.resolve("scripted/demo") is None


def test_resolve_by_id_or_unique_bare_name(tmp_path: Path) -> None:
    """Checks resolve(): a full "provider/model" id, or a bare model name only one provider has;
    ambiguous or unknown selections resolve to nothing."""
    write_config(tmp_path, FULL)
    catalog = ModelCatalog(load_config(tmp_path))
    local_qwen = catalog.resolve("local/qwen")
    assert local_qwen is not None
    assert local_qwen.id == "local/qwen"
    fake_qwen = catalog.resolve("fake/qwen")
    assert fake_qwen is not None
    assert fake_qwen.provider.name == "fake"
    deep = catalog.resolve("deep")
    assert deep is not None
    assert deep.id == "local/deep"
    demo = catalog.resolve("demo")
    assert demo is not None
    assert demo.id == "scripted/demo"
    assert catalog.resolve("qwen") is None  # two providers have it
    assert catalog.resolve("nope") is None
    assert catalog.resolve("local/nope") is None
    assert catalog.resolve("other/qwen") is None
    assert catalog.resolve("") is None


def test_default_reasoning(tmp_path: Path) -> None:
    """Checks default_reasoning: the configured one, else the first level, else none."""
    write_config(
        tmp_path,
        '[[providers]]\nname = "p"\nkind = "anthropic"\n'
        'models = [{ id = "a", reasoning_levels = ["low", "high"] }, '
        '{ id = "b", reasoning_levels = ["low", "high"], default_reasoning = "high" }, { id = "c" }]',
    )
    catalog = ModelCatalog(load_config(tmp_path))
    by_id = {e.id: e for e in catalog.entries}
    assert by_id["p/a"].default_reasoning == "low"
    assert by_id["p/b"].default_reasoning == "high"
    assert by_id["p/c"].default_reasoning is None
    assert by_id["p/c"].has_reasoning is False


def test_base_capabilities_are_always_advertised(tmp_path: Path) -> None:
    """Covers: R7.3, R7.4, R7.5, R7.6, R7.7. With no model, or a model without reasoning levels,
    the runtime advertises exactly streaming-deltas, mode-catalog, mode-switch, model-catalog and
    model-switch, plus the ui:* kinds it can ask, spelled as the protocol spells them (PROTOCOL §7
    names these; the whole list is ``BASE_CAPABILITIES``)."""
    spelled = {"streaming-deltas", "mode-catalog", "mode-switch", "model-catalog", "model-switch"}
    demo = ModelCatalog(load_config(tmp_path)).resolve("scripted/demo")
    for entry in (None, demo):
        caps = capabilities_for(entry)
        assert caps == list(BASE_CAPABILITIES)
        assert len(caps) == len(set(caps))
    assert spelled | {"ui:select", "ui:editor"} <= set(BASE_CAPABILITIES)
    assert not set(BASE_CAPABILITIES) & set(REASONING_CAPABILITIES)


def test_reasoning_capabilities_only_for_models_with_levels(tmp_path: Path) -> None:
    """Covers: R9.2.31, R7.4. A model with reasoning levels adds reasoning-catalog and
    reasoning-switch to the base set; a model without levels does not."""
    write_config(tmp_path, FULL)
    catalog = ModelCatalog(load_config(tmp_path))
    deep, qwen = catalog.resolve("local/deep"), catalog.resolve("local/qwen")
    assert deep is not None
    assert qwen is not None
    deep_caps = capabilities_for(deep)
    assert set(deep_caps) == set(BASE_CAPABILITIES) | set(REASONING_CAPABILITIES)
    assert len(deep_caps) == len(set(deep_caps))
    assert "mode-catalog" in deep_caps
    assert not {"reasoning-catalog", "reasoning-switch"} & set(capabilities_for(qwen))


@pytest.mark.parametrize(
    ("selection", "env", "hint"),
    [
        (
            "local/qwen3",
            {},
            "to add it, list it in provider 'local' in config.toml: models = [..., \"qwen3\"] "
            "(README: Configuration)",
        ),
        (
            "ollama/llama3",
            {},
            'to add it, configure the provider in config.toml: [[providers]] name = "ollama" kind = "openai" '
            'base_url = "http://127.0.0.1:11434/v1" models = ["llama3"] (README: Configuration)',
        ),
        (
            "anthropic/claude-sonnet-5-5",
            {},
            "the built-in anthropic provider appears when ANTHROPIC_API_KEY is set (README: Configuration)",
        ),
        ("qwen", {}, "several providers offer it: name one of local/qwen, fake/qwen"),
        (
            "qwen3",
            {},
            "name it as <provider>/<model> and list the model under that provider in config.toml: "
            'models = ["qwen3"] (README: Configuration)',
        ),
        (
            "local/" + "x" * 500,
            {},
            "models are listed under [[providers]] in config.toml (README: Configuration)",
        ),
    ],
    ids=["known-provider", "new-provider", "builtin-without-key", "ambiguous", "bare-name", "long"],
)
def test_an_unknown_model_says_how_to_add_it(tmp_path: Path, selection: str, env: dict, hint: str) -> None:
    """The one line for an unknown selection (``--model``, ``default_model``, ``set_model``) lists
    the models there are and says how to add this one: to the provider that exists, as a new
    [[providers]] table, by setting the built-in provider's key variable, or which provider to name
    when several have it. A selection too long or odd to quote in a snippet gets the README pointer
    only (and is quoted cut short)."""
    write_config(tmp_path, FULL)
    catalog = ModelCatalog(load_config(tmp_path), env=env)
    message = catalog.unknown(selection)
    assert message.startswith("unknown model ")
    assert "(models: local/qwen, local/deep, fake/qwen, scripted/demo); " in message
    assert message.endswith("; " + hint)
    assert len(message) < 600

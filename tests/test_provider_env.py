"""The provider environment's comparison (``shard._provider_env``), pure: which variables count, and
what the daemon's side answers — names only, and never about a variable it may not look at."""

from __future__ import annotations

from collections.abc import Mapping

from shard._provider_env import Holder, gather, is_provider_variable, nonce, seal, sealed


def _holder(values: Mapping[str, str], vouched: tuple[str, ...] = ()) -> tuple[Holder, list[str]]:
    looked: list[str] = []

    def lookup(name: str) -> str | None:
        looked.append(name)
        return values.get(name)

    return Holder(lookup, lambda: list(values), lambda: vouched), looked


def test_the_provider_variables_are_the_sdk_namespaces_the_transports_and_configs_keys():
    assert all(
        is_provider_variable(n)
        for n in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "OPENAI_ORG_ID")
    )
    assert all(is_provider_variable(n) for n in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "SSL_CERT_FILE"))
    assert not any(is_provider_variable(n) for n in ("PATH", "HOME", "LOCAL_KEY", "AWS_SECRET_ACCESS_KEY"))
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "", "PATH": "/bin", "LOCAL_KEY": "l"}
    assert gather(env, ["LOCAL_KEY", "OTHER_KEY"]) == {
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": None,  # empty is unset, as for the catalog
        "LOCAL_KEY": "l",
        "OTHER_KEY": None,
    }


def test_the_same_environment_differs_in_nothing_and_each_difference_is_named():
    mine = {"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://a/v1", "LOCAL_KEY": "l"}
    holder, _ = _holder(mine, vouched=("LOCAL_KEY", "ANTHROPIC_API_KEY"))
    n = nonce()
    same = {**mine, "ANTHROPIC_API_KEY": None}
    assert holder.differing(n, sealed(n, same)) == []
    assert holder.differing(n, sealed(n, {**same, "OPENAI_API_KEY": "sk-2"})) == ["OPENAI_API_KEY"]
    assert holder.differing(n, sealed(n, {**same, "ANTHROPIC_API_KEY": "sk-ant"})) == ["ANTHROPIC_API_KEY"]
    missing = {k: v for k, v in same.items() if k != "OPENAI_BASE_URL"}
    assert holder.differing(n, sealed(n, missing)) == ["OPENAI_BASE_URL"], "one the caller lacks counts"
    assert holder.differing(n, sealed(n, {**same, "LOCAL_KEY": None})) == ["LOCAL_KEY"]


def test_a_variable_the_daemon_may_not_look_at_differs_unlooked():
    """A name outside the provider namespaces that the daemon was not asked to capture (a key
    config names since the daemon started, or a probe) is never looked up: it counts as different."""
    holder, looked = _holder({"OPENAI_API_KEY": "sk-1", "AWS_SECRET_ACCESS_KEY": "aws"})
    n = nonce()
    theirs = sealed(n, {"OPENAI_API_KEY": "sk-1", "AWS_SECRET_ACCESS_KEY": "aws", "NEW_KEY": None})
    assert holder.differing(n, theirs) == ["AWS_SECRET_ACCESS_KEY", "NEW_KEY"]
    assert "AWS_SECRET_ACCESS_KEY" not in looked
    assert "NEW_KEY" not in looked


def test_a_seal_holds_no_value_and_another_nonce_gives_another_seal():
    n1, n2 = nonce(), nonce()
    assert n1 != n2
    assert len(n1) == 32
    sealed1, sealed2 = seal(n1, "sk-secret"), seal(n2, "sk-secret")
    assert sealed1 is not None
    assert sealed2 is not None
    assert sealed1 != sealed2
    assert "sk-secret" not in sealed1
    assert seal(n1, None) is None
    assert seal(n1, "") is None
